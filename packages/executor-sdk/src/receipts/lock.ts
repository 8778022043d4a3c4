import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { link, readFile, rename, unlink } from 'node:fs/promises';
import { threadId } from 'node:worker_threads';
import { ReceiptError } from '../errors.ts';

/** Settings of {@link withFileLock}. */
export interface FileLockSettings {
  /** Give up after this many milliseconds of waiting (default 10 000). */
  timeoutMs?: number;
  /** Whether a process id is alive; default `process.kill(pid, 0)`. */
  alive?: (pid: number) => boolean;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it is someone else's
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Takes a lock that leaves a stale file behind: only when the process that
 * wrote it is gone. The file is renamed aside (one process wins a rename) and
 * checked to be the stale one; a live lock renamed by mistake is put back.
 */
async function stealIfStale(path: string, alive: (pid: number) => boolean): Promise<void> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return;
  }
  const pid = Number(text.split(' ')[0]);
  // an empty lock (written by a Metnos that created it before writing): treated as live
  if (!Number.isSafeInteger(pid) || pid <= 0 || alive(pid)) return;
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch {
    return;
  }
  const moved = await readFile(aside, 'utf8').catch(() => '');
  if (moved !== text) await link(aside, path).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}

/**
 * Creates the lock file with its content already in it: the token goes into a draft of this
 * process, which is then linked to the lock's name (a link fails when the name exists, as an
 * exclusive create does). So a process killed at any moment leaves either no lock or one that
 * names it, never an empty one that nobody could tell is stale. False when the lock is taken.
 */
function takeLock(path: string, draft: string, token: string): boolean {
  // a draft a killed run of a process (and thread) with these ids left behind
  rmSync(draft, { force: true });
  // exclusive: never through a link someone planted under the draft's name
  writeFileSync(draft, token, { flag: 'wx', mode: 0o600 });
  try {
    linkSync(draft, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(draft, { force: true });
  }
}

/**
 * Runs `work` while holding an exclusive lock file (created whole, see takeLock, holding
 * `<pid> <token>`), so processes sharing a folder take turns; a lock left by
 * a process that died is taken over. Throws `ReceiptError` (`lock_timeout`)
 * when another live process holds it longer than `timeoutMs`.
 *
 * @example
 * await withFileLock('/ws/.audit/receipts/.lock', async () => appendNext());
 */
export async function withFileLock<T>(
  path: string,
  work: () => Promise<T>,
  settings: FileLockSettings = {},
): Promise<T> {
  const timeoutMs = settings.timeoutMs ?? 10_000;
  const alive = settings.alive ?? processAlive;
  const token = `${process.pid} ${randomBytes(8).toString('hex')}`;
  const started = Date.now();
  // one draft per thread: threads of a process share its id, and takeLock never yields, so
  // within one thread two calls cannot meet at the draft
  const draft = `${path}.${process.pid}.${threadId}.draft`;
  for (let attempt = 0; ; attempt++) {
    // synchronous: a few tiny syscalls on every receipt cost less than their thread hops
    try {
      if (takeLock(path, draft, token)) break;
    } catch (error) {
      throw new ReceiptError({
        reason: 'unsafe_path',
        path,
        message: `the receipt lock ${path} cannot be created: ${(error as Error).message}`,
        cause: error,
      });
    }
    await stealIfStale(path, alive);
    if (Date.now() - started > timeoutMs)
      throw new ReceiptError({
        reason: 'lock_timeout',
        path,
        message: `another Metnos process has held the receipt lock ${path} for over ${timeoutMs} ms`,
      });
    await sleep(Math.min(50, 2 + attempt * 2));
  }
  try {
    return await work();
  } finally {
    // only our own lock is removed
    let holder = '';
    try {
      holder = readFileSync(path, 'utf8');
    } catch {
      holder = '';
    }
    if (holder === token) {
      try {
        unlinkSync(path);
      } catch {
        // gone already
      }
    }
  }
}
