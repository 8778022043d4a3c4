// One child process for the docs check: its output in the order it came, killed whole on a timeout.
import { spawn } from 'node:child_process';

export interface ProcessOutcome {
  /** The exit code, or null when a signal (the timeout included) ended it. */
  code: number | null;
  /** stdout and stderr interleaved as they arrived. */
  output: string;
  timedOut: boolean;
  ms: number;
}

/**
 * Runs `command` to its end in its own process group, so a timeout also ends whatever it started.
 *
 * @example
 * const { code, output } = await runProcess('bash', ['-c', 'echo hi'], { cwd: '/', env: process.env, timeoutMs: 5_000 });
 */
export function runProcess(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<ProcessOutcome> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({
        code,
        output: Buffer.concat(chunks).toString('utf8'),
        timedOut,
        ms: performance.now() - started,
      });
    });
  });
}
