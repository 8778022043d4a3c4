import { type ChildProcess, spawn } from 'node:child_process';
import {
  childResultSchema,
  type ExecutorResult,
  failure,
  HOST_ONLY_ERROR_CLASSES,
  type IsolationRecord,
} from './result.ts';

const HOST_ONLY = new Set<string>(HOST_ONLY_ERROR_CLASSES);

/** How to start one executor process. The sandbox builds a wrapped one; the plain runner a bare one. */
export interface ChildSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** The JSON request written to stdin. */
  input: string;
  timeoutMs: number;
  maxStdoutBytes: number;
  maxStderrBytes: number;
  isolation: IsolationRecord;
  signal?: AbortSignal;
  /**
   * Started once the process runs (the sandbox's write meter): it may stop the
   * whole process group with an error class and message, and returns the
   * function that ends the watch.
   */
  watch?: (pid: number, stop: (errorClass: string, message: string) => void) => () => void;
}

/**
 * How to watch a process that is already running (a warm process of the
 * sandbox's pool): everything of a {@link ChildSpec} but how to start it.
 */
export type SupervisedChildSpec = Omit<ChildSpec, 'command' | 'args' | 'env' | 'cwd'>;

/** What happened to the process, beside the parsed result. */
export interface ChildReport {
  result: ExecutorResult;
  exitCode: number | null;
  exitSignal: NodeJS.Signals | null;
  durationMs: number;
  stdoutBytes: number;
  stderr: string;
  /** The raw stdout, trimmed, for hashing in the audit line. */
  stdout: string;
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/**
 * Runs one executor process: writes the request, caps stdout and stderr,
 * kills the whole process group on timeout, cap overflow or abort, and parses
 * stdout with a schema. Every failure becomes `{ ok: false }` with the cause;
 * this function never rejects.
 *
 * @example
 * const report = await runChild({ command: process.execPath, args: [harness], ... });
 */
export function runChild(spec: ChildSpec): Promise<ChildReport> {
  const started = performance.now();
  const notStarted = (result: ExecutorResult, durationMs: number): ChildReport => ({
    result,
    exitCode: null,
    exitSignal: null,
    durationMs,
    stdoutBytes: 0,
    stderr: '',
    stdout: '',
  });
  if (spec.signal?.aborted) {
    // An abort listener would never fire for a signal that is already aborted.
    return Promise.resolve(
      notStarted(
        failure('Timeout', 'the call was aborted by the caller before it started', {
          isolation: spec.isolation,
        }),
        0,
      ),
    );
  }
  let child: ChildProcess;
  try {
    child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
  } catch (error) {
    return Promise.resolve(
      notStarted(
        failure('Crashed', `could not start the executor process: ${(error as Error).message}`, {
          isolation: spec.isolation,
        }),
        performance.now() - started,
      ),
    );
  }
  return superviseChild(child, spec, started);
}

/**
 * Watches one running executor process through its call: writes the request
 * and ends stdin, caps stdout and stderr, kills the whole process group on
 * timeout, cap overflow or abort, and parses stdout with a schema. The
 * deadline runs from now. {@link runChild} uses it for a process it has just
 * started; the sandbox's pool for a process started earlier, which has
 * written nothing since it said it was ready. Never rejects.
 *
 * @example
 * const report = await superviseChild(warm.child, { ...spec, input: `${callLine}\n` });
 */
export function superviseChild(
  child: ChildProcess,
  spec: SupervisedChildSpec,
  started = performance.now(),
): Promise<ChildReport> {
  return new Promise((resolve) => {
    let cause: { errorClass: string; message: string } | undefined;
    let settled = false;

    const stop = (errorClass: string, message: string) => {
      cause ??= { errorClass, message };
      killGroup(child.pid);
      // The outcome is decided: stop reading, so a descendant that left the process
      // group and still holds the pipes cannot keep the call from returning.
      child.stdout?.destroy();
      child.stderr?.destroy();
    };
    const timer = setTimeout(
      () => stop('Timeout', `the executor ran past ${spec.timeoutMs} ms and was killed`),
      spec.timeoutMs,
    );
    const onAbort = () => stop('Timeout', 'the call was aborted by the caller');
    spec.signal?.addEventListener('abort', onAbort, { once: true });
    if (spec.signal?.aborted) onAbort();
    const unwatch = spec.watch && child.pid !== undefined ? spec.watch(child.pid, stop) : undefined;

    /** Keeps a stream's bytes up to its cap; past it, the whole process group is stopped. */
    const capture = (stream: NodeJS.ReadableStream, name: 'stdout' | 'stderr', cap: number) => {
      const captured = { chunks: [] as Buffer[], bytes: 0 };
      stream.on('data', (chunk: Buffer) => {
        captured.bytes += chunk.length;
        if (captured.bytes > cap) {
          stop('OutputTooLarge', `the executor wrote more than ${cap} bytes to ${name}`);
          return;
        }
        captured.chunks.push(chunk);
      });
      return captured;
    };
    const stdoutCapture = capture(child.stdout!, 'stdout', spec.maxStdoutBytes);
    const stderrCapture = capture(child.stderr!, 'stderr', spec.maxStderrBytes);
    // a warm process's streams were paused while it waited
    child.stdout!.resume();
    child.stderr!.resume();
    child.stdin!.on('error', () => {
      // the child may exit before reading its input; the exit handler reports it
    });
    child.stdin!.end(spec.input);

    const finish = (exitCode: number | null, exitSignal: NodeJS.Signals | null, spawnError?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      unwatch?.();
      spec.signal?.removeEventListener('abort', onAbort);
      killGroup(child.pid);
      const stdout = Buffer.concat(stdoutCapture.chunks).toString('utf8').trim();
      const stderr = Buffer.concat(stderrCapture.chunks).toString('utf8');
      const stdoutBytes = stdoutCapture.bytes;
      const durationMs = performance.now() - started;
      const base = { exitCode, exitSignal, durationMs, stdoutBytes, stderr, stdout };
      const fail = (errorClass: string, message: string) =>
        resolve({ ...base, result: failure(errorClass, message, { isolation: spec.isolation }) });
      if (spawnError) return fail('Crashed', `could not start the executor process: ${spawnError.message}`);
      if (cause) return fail(cause.errorClass, cause.message);
      const lastLine = stdout.split('\n').at(-1) ?? '';
      let parsed: unknown;
      try {
        parsed = JSON.parse(lastLine);
      } catch {
        const tail = stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 500);
        if (exitCode !== 0 || exitSignal) {
          return fail(
            'Crashed',
            `the executor exited with ${exitSignal ?? `code ${exitCode}`} before writing a result${tail ? `: ${tail}` : ''}`,
          );
        }
        return fail(
          'NonJsonOutput',
          `the executor printed something that is not a JSON result: ${JSON.stringify(stdout.slice(0, 200))}`,
        );
      }
      if (stdout.includes('\n')) {
        return fail('NonJsonOutput', 'the executor printed extra lines on stdout beside its result');
      }
      const result = childResultSchema.safeParse(parsed);
      if (!result.success) {
        return fail(
          'NonJsonOutput',
          `the executor's result does not have the { ok, content, metadata, error } shape`,
        );
      }
      if (!result.data.ok && HOST_ONLY.has(result.data.error.class)) {
        // A refusal or a limit is the host's word; a process that claims one is lying about who stopped it.
        return fail(
          'InvalidOutput',
          `the executor returned the error class "${result.data.error.class}", which only the host may emit`,
        );
      }
      resolve({ ...base, result: { ...result.data, isolation: spec.isolation } as ExecutorResult });
    };
    child.on('error', (error) => finish(null, null, error));
    child.on('close', (code, signal) => finish(code, signal));
  });
}
