import { dataDir, readAppConfig } from '../config.ts';
import type { CliIo } from '../output.ts';
import { resolvePlace } from '../workspace.ts';
import { formatIntegrity, integrityFindings } from './doctor-integrity.ts';
import { formatStores, storeFindings } from './doctor-stores.ts';

export const DOCTOR_HELP = `metnos doctor — what isolation this host supports, and how to fix what is missing

Usage:
  metnos doctor [--json] [--repair]

Options:
  --repair   move every store file that cannot be used (not a database, damaged, a folder) aside
             to <file>.corrupt-<time> and create a fresh, empty store in its place
`;

export async function doctorCommand(argv: string[], io: CliIo): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.out(DOCTOR_HELP);
    return 0;
  }
  const sandbox = await import('@metnos/sandbox');
  const report = sandbox.doctor();
  const place = await resolvePlace({});
  const integrity = await integrityFindings(place);
  const data = dataDir(place, readAppConfig(place));
  const stores = storeFindings(data, { repair: argv.includes('--repair') });
  io.out(
    argv.includes('--json')
      ? JSON.stringify({ ...report, integrity, stores }, null, 2)
      : `${sandbox.formatDoctorReport(report)}\n${formatIntegrity(integrity)}\n${formatStores(data, stores)}`,
  );
  return 0;
}
