import type { CliIo } from '../output.ts';

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
  io.out(argv.includes('--json') ? JSON.stringify(report, null, 2) : sandbox.formatDoctorReport(report));
  return 0;
}
