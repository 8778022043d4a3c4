import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  defineExecutor,
  displayPath,
  ExecutorFailure,
  isInside,
  ok,
  realpathLenient,
} from '@metnos/executor-sdk/define';

interface Args {
  command: string;
  args?: string[];
  cwd?: string;
  stdin?: string;
  timeout_ms?: number;
  max_output_bytes?: number;
}

interface Output {
  command: string;
  args: string[];
  cwd: string;
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  duration_ms: number;
}

const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';
/** Time kept back from the call's deadline to report a timeout ourselves. */
const DEADLINE_MARGIN_MS = 750;

async function insideAny(path: string, roots: readonly string[]): Promise<boolean> {
  const real = await realpathLenient(path);
  for (const root of roots) {
    if (isInside(resolve(root), path) && isInside(await realpathLenient(resolve(root)), real)) return true;
  }
  return false;
}

/**
 * Arguments that name a path (absolute, `~`, or climbing with `..`) must stay
 * inside the profile's folders. The sandbox enforces the same, this says why early.
 */
async function checkPathArguments(
  args: readonly string[],
  cwd: string,
  roots: readonly string[],
): Promise<void> {
  for (const arg of args) {
    if (arg.includes('\0')) throw new ExecutorFailure('PermissionDenied', 'an argument contains a NUL byte');
    const value = arg.startsWith('-') && arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : arg;
    const climbs = value.split(/[\\/]/).includes('..');
    if (!(value.startsWith('/') || value.startsWith('~') || climbs)) continue;
    if (value.startsWith('~')) {
      throw new ExecutorFailure('PermissionDenied', `${arg}: home-relative paths are not available`);
    }
    if (!(await insideAny(resolve(cwd, value), roots))) {
      throw new ExecutorFailure('PermissionDenied', `${arg} points outside the workspace`);
    }
  }
}

/** Collects the first `limit` bytes of a stream and counts the rest. */
function capture(stream: NodeJS.ReadableStream, limit: number) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let total = 0;
  stream.on('data', (chunk: Buffer) => {
    total += chunk.length;
    if (kept >= limit) return;
    const piece = chunk.subarray(0, limit - kept);
    chunks.push(piece);
    kept += piece.length;
  });
  return {
    text: () => {
      const bytes = Buffer.concat(chunks);
      let end = bytes.length;
      // A cut in the middle of a UTF-8 character drops the partial character.
      if (total > kept) while (end > 0 && (bytes[end - 1]! & 0xc0) === 0x80) end--;
      if (total > kept && end > 0 && bytes[end - 1]! >= 0xc0) end--;
      return new TextDecoder('utf-8', { fatal: false }).decode(bytes.subarray(0, end));
    },
    truncated: () => total > kept,
  };
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const { exec } = ctx.profile;
    if (exec.mode !== 'allowlist' || !exec.binaries.includes(args.command)) {
      throw new ExecutorFailure(
        'Forbidden',
        `${args.command} is not allowed; allowed: ${exec.binaries.join(', ') || 'none'}. Commands run without a shell.`,
      );
    }
    const argv = args.args ?? [];
    const readable = [...ctx.profile.fs.read, ...ctx.profile.fs.write];
    const cwd = resolve(ctx.workspace, args.cwd ?? '.');
    if (args.cwd?.includes('\0') || !(await insideAny(cwd, ctx.profile.fs.read))) {
      throw new ExecutorFailure('PermissionDenied', `cwd ${args.cwd} is outside the workspace`);
    }
    const cwdStats = await stat(cwd).catch(() => undefined);
    if (!cwdStats?.isDirectory()) {
      throw new ExecutorFailure('NotFound', `cwd ${args.cwd} is not an existing folder`);
    }
    await checkPathArguments(argv, cwd, readable);

    const remaining = ctx.deadline - Date.now() - DEADLINE_MARGIN_MS;
    const timeout = Math.max(100, Math.min(args.timeout_ms ?? 10_000, remaining));
    const limit = args.max_output_bytes ?? 64 * 1024;
    const started = performance.now();

    // Spawned by name: the sandbox puts only the allow-listed binaries' folders on PATH.
    const child = spawn(args.command, argv, {
      cwd,
      shell: false,
      env: {
        PATH: process.env.PATH || DEFAULT_PATH,
        HOME: ctx.tmpDir,
        TMPDIR: ctx.tmpDir,
        LANG: 'C.UTF-8',
        LC_ALL: 'C.UTF-8',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stdout = capture(child.stdout, limit);
    const stderr = capture(child.stderr, limit);
    child.stdin.on('error', () => {
      // the program may exit without reading its input
    });
    child.stdin.end(args.stdin ?? '');

    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeout);
    const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>(
      (resolveExit, rejectExit) => {
        child.on('error', rejectExit);
        child.on('close', (code, closeSignal) => resolveExit([code, closeSignal]));
      },
    )
      .catch((error: NodeJS.ErrnoException): never => {
        if (error.code === 'EACCES' || error.code === 'EPERM') {
          throw new ExecutorFailure(
            'PermissionDenied',
            `${args.command} may not be executed here (${error.code})`,
          );
        }
        if (error.code === 'ENOENT') {
          throw new ExecutorFailure('NotFound', `${args.command} is allowed but not installed on this host`);
        }
        throw error;
      })
      .finally(() => clearTimeout(timer));

    if (timedOut) {
      const partial = stdout.text().slice(0, 2000);
      throw new ExecutorFailure(
        'Timeout',
        `${args.command} ran past ${timeout} ms and was killed${partial ? `; its output so far began: ${partial}` : ''}`,
      );
    }
    return ok({
      command: args.command,
      args: argv,
      cwd: displayPath(cwd, ctx),
      exit_code: exitCode,
      signal,
      stdout: stdout.text(),
      stderr: stderr.text(),
      stdout_truncated: stdout.truncated(),
      stderr_truncated: stderr.truncated(),
      duration_ms: Math.round(performance.now() - started),
    });
  },
});
