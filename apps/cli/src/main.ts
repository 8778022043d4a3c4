#!/usr/bin/env node
// Commands are imported when they run, so `--version`, `--help` and a typo answer at once.
import { CliFailure, type CliIo, invokedAs, processIo, spokenAs } from './output.ts';
import { cliVersion } from './version.ts';

export const HELP = `metnos — the Metnos command line

Usage:
  metnos init [dir]                            create a workspace: metnos.toml, the seed executors, your key
  metnos ask "<request>"                       one turn: the request answered through the executors
  metnos serve [--port <n>] [--host <addr>]    the always-on assistant: the HTTP API, until Ctrl-C
  metnos feedback <turn-id> <up|down|retry>    tell the memory how a turn went
  metnos schedule add|list|pause|resume|cancel|run-now   what Metnos does at a cadence
  metnos replay <turn-id>                      run a recorded turn again and check every step against it
  metnos memory <list|forget|age>              remembered plans, and forgetting them by hand
  metnos devices <pair|list|rename|revoke|allow|call>   laptops that run executors for this server
  metnos undo <trace-id>                       undo the file changes of a remote call on its laptop
  metnos audit <trace-id>                      a trace's audit lines: the server's and its laptop's
  metnos synt <list|show|approve|reject|suggest>   executors Metnos proposes to make, merge, generalise, specialise
  metnos mcp [approvals|approve|deny|wrap]     executors as MCP tools on stdio; MCP servers wrapped as executors
  metnos receipts <verify|repair>              the signed chain of every model call and executor invocation
  metnos keys <init|list|trust|untrust>        signing keys and trusted public keys
  metnos executor <new|sign|verify|list|test|run|archive|rehabilitate|promote>
  metnos doctor [--repair]                      what isolation this host supports, the state of the stores

Run \`metnos <command> --help\` for the options of each command, \`metnos --version\` for the version.
Set METNOS_DEBUG=1 to see the stack of an unexpected error.
`;

/** Runs one CLI command; returns the exit code. Never throws. */
export async function runCli(argv: string[], out: CliIo = processIo): Promise<number> {
  const [command, ...rest] = argv;
  // hints and help name the command the way the person typed it (`pnpm metnos`, `npx @metnos/cli`)
  const io = spokenAs(out, invokedAs());
  try {
    switch (command) {
      case 'init':
        return await (await import('./commands/init.ts')).initCommand(rest, io);
      case '--version':
      case '-v':
      case 'version':
        io.out(`metnos ${cliVersion()} (node ${process.versions.node})`);
        return 0;
      case 'keys':
        return await (await import('./commands/keys.ts')).keysCommand(rest, io);
      case 'executor':
      case 'executors':
        return await (await import('./commands/executor.ts')).executorCommand(rest, io);
      case 'doctor':
        return await (await import('./commands/doctor.ts')).doctorCommand(rest, io);
      case 'ask':
        return await (await import('./commands/ask.ts')).askCommand(rest, io);
      case 'serve':
        return await (await import('./commands/serve.ts')).serveCommand(rest, io);
      case 'schedule':
        return await (await import('./commands/schedule.ts')).scheduleCommand(rest, io);
      case 'synt':
        return await (await import('./commands/synt.ts')).syntCommand(rest, io);
      case 'mcp':
        return await (await import('./commands/mcp.ts')).mcpCommand(rest, io);
      case 'receipts':
        return await (await import('./commands/receipts.ts')).receiptsCommand(rest, io);
      case 'feedback':
        return await (await import('./commands/ask.ts')).feedbackCommand(rest, io);
      case 'replay':
        return await (await import('./commands/replay.ts')).replayCommand(rest, io);
      case 'devices':
      case 'device':
        return await (await import('./commands/devices.ts')).devicesCommand(rest, io);
      case 'undo':
        return await (await import('./commands/devices.ts')).undoCommand(rest, io);
      case 'audit':
        return await (await import('./commands/devices.ts')).auditCommand(rest, io);
      case 'memory':
        return await (await import('./commands/memory.ts')).memoryCommand(rest, io);
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
    if (isMetnosError(error)) {
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
    // a bug of Metnos, not a mistake of the person: the stack only on request
    const message = (error as Error)?.message ?? String(error);
    io.err(
      process.env.METNOS_DEBUG === '1'
        ? `unexpected error: ${(error as Error)?.stack ?? message}`
        : `unexpected error: ${message}\n(set METNOS_DEBUG=1 to see where it happened, and report it)`,
    );
    return 1;
  }
}

/** What `MetnosError.isInstance` checks, without loading the SDK for it. */
function isMetnosError(error: unknown): error is Error {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as Record<symbol, unknown>)[Symbol.for('metnos.error')] === true
  );
}

/** An error the host's files or SQLite raised (ENOENT, EACCES, SQLITE_BUSY, …), as opposed to a bug. */
function isEnvironmentError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return error instanceof Error && typeof code === 'string' && /^(E[A-Z]+|SQLITE_[A-Z_]+)$/.test(code);
}

if (import.meta.main) {
  process.exitCode = await runCli(process.argv.slice(2));
}
