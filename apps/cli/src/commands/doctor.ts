import type { CliIo } from '../output.ts';
import { resolvePlace } from '../workspace.ts';
import { formatIntegrity, integrityFindings } from './doctor-integrity.ts';

export const DOCTOR_HELP = `metnos doctor — what isolation this host supports, and how to fix what is missing

Usage:
  metnos doctor [--json]
`;

export async function doctorCommand(argv: string[], io: CliIo): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.out(DOCTOR_HELP);
    return 0;
  }
  const sandbox = await import('@metnos/sandbox');
  const report = sandbox.doctor();
  const integrity = await integrityFindings(await resolvePlace({}));
  io.out(
    argv.includes('--json')
      ? JSON.stringify({ ...report, integrity }, null, 2)
      : `${sandbox.formatDoctorReport(report)}\n${formatIntegrity(integrity)}`,
  );
  return 0;
}
