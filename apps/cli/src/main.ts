#!/usr/bin/env node
import { MetnosError } from '@metnos/executor-sdk';
import { askCommand, feedbackCommand } from './commands/ask.ts';
import { doctorCommand } from './commands/doctor.ts';
import { executorCommand } from './commands/executor.ts';
import { keysCommand } from './commands/keys.ts';
import { memoryCommand } from './commands/memory.ts';
import { CliFailure, type CliIo, processIo } from './output.ts';

export const HELP = `metnos — the Metnos command line

Usage:
  metnos ask "<request>"                       one turn: the request answered through the executors
  metnos feedback <turn-id> <up|down|retry>    tell the memory how a turn went
  metnos memory <list|forget|age>              remembered plans, and forgetting them by hand
  metnos keys <init|list|trust|untrust>        signing keys and trusted public keys
  metnos executor <new|sign|verify|list|test|run|archive|rehabilitate|promote>
  metnos doctor [--repair]                      what isolation this host supports, the state of the stores

Run \`metnos <command> --help\` for the options of each command.
`;

/** Runs one CLI command; returns the exit code. Never throws. */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'keys':
        return await keysCommand(rest, io);
      case 'executor':
      case 'executors':
        return await executorCommand(rest, io);
      case 'doctor':
        return await doctorCommand(rest, io);
      case 'ask':
        return await askCommand(rest, io);
      case 'feedback':
        return await feedbackCommand(rest, io);
      case 'memory':
        return await memoryCommand(rest, io);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.out(HELP);
        return command === undefined ? 2 : 0;
      default:
        io.err(`unknown command "${command}"\n\n${HELP}`);
        return 2;
    }
  } catch (error) {
    if (error instanceof CliFailure) {
      io.err(error.message);
      return error.exitCode;
    }
    if (MetnosError.isInstance(error)) {
      io.err(`error: ${error.message}`);
      return 1;
    }
    if ((error as { code?: string })?.code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`${(error as Error).message}\nRun \`metnos ${command} --help\`.`);
      return 2;
    }
    if (isEnvironmentError(error)) {
      // A file that is missing, unreadable or in the way: the person can fix it, a stack would not help.
      io.err(`error: ${(error as Error).message}`);
      return 1;
    }
    io.err(`unexpected error: ${(error as Error)?.stack ?? String(error)}`);
    return 1;
  }
}

/** An error the host's files or SQLite raised (ENOENT, EACCES, SQLITE_BUSY, …), as opposed to a bug. */
function isEnvironmentError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return error instanceof Error && typeof code === 'string' && /^(E[A-Z]+|SQLITE_[A-Z_]+)$/.test(code);
}

if (import.meta.main) {
  process.exitCode = await runCli(process.argv.slice(2));
}
