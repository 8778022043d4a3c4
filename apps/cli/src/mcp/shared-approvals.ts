import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { McpHeldCall, McpHeldCalls } from '@metnos/server';
import { type ApprovalStore, createApprovalStore, createFileApprovalDb } from '@metnos/vaglio';

/** A lock older than this was left by a process that died: it is taken over. */
const STALE_MS = 30_000;

/** Runs `task` holding `<dir>/lock` (created exclusively), one process at a time. */
async function withLock<T>(dir: string, task: () => Promise<T>): Promise<T> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const lock = join(dir, 'lock');
  const started = Date.now();
  for (;;) {
    try {
      const handle = await open(lock, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = await stat(lock).then(
        (info) => Date.now() - info.mtimeMs,
        () => 0,
      );
      if (age > STALE_MS) await rm(lock, { force: true });
      else if (Date.now() - started > 10_000)
        throw new Error(`${lock} stays locked; remove it if no metnos mcp runs`);
      else await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  try {
    return await task();
  } finally {
    await rm(lock, { force: true });
  }
}

interface HeldFile {
  version: 1;
  calls: McpHeldCall[];
}

async function readHeld(path: string): Promise<McpHeldCall[]> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as HeldFile;
    return parsed.version === 1 && Array.isArray(parsed.calls) ? parsed.calls : [];
  } catch {
    return [];
  }
}

async function writeHeld(path: string, calls: McpHeldCall[]): Promise<void> {
  const temp = `${path}.${process.pid}.${randomUUID()}.tmp`;
  await writeFile(temp, `${JSON.stringify({ version: 1, calls }, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, path);
}

/**
 * The approvals of `metnos mcp` (stdio) where the person can reach them from
 * another terminal: the vaglio's approval store in `<dir>/approvals.json` and
 * the calls waiting for a decision, with their arguments, in
 * `<dir>/pending.json` (both mode 0600, in the data folder no executor may
 * write). Every operation loads the files, decides and saves under one lock
 * file, so the MCP server process and `metnos mcp approve` never overwrite
 * each other's decisions.
 *
 * @example
 * const shared = createSharedApprovals(join(dataDir, 'mcp'));
 * const vaglio = createVaglio({ approvals: shared.approvals });
 * createMcpCallPath({ …, approvals: shared.approvals, held: shared.held });
 */
export function createSharedApprovals(dir: string) {
  const storePath = join(dir, 'approvals.json');
  const heldPath = join(dir, 'pending.json');
  const fresh = () => createApprovalStore({ db: createFileApprovalDb(storePath) });
  const locked = <T>(task: () => Promise<T>) => withLock(dir, task);

  const approvals: ApprovalStore = {
    request: (call) => locked(() => fresh().request(call)),
    approve: (id, call) => locked(() => fresh().approve(id, call)),
    deny: (id) => locked(() => fresh().deny(id)),
    check: (id, call) => locked(() => fresh().check(id, call)),
    get: (id) => locked(() => fresh().get(id)),
  };

  const held: McpHeldCalls & {
    list(): Promise<McpHeldCall[]>;
    get(id: string): Promise<McpHeldCall | undefined>;
  } = {
    hold: (entry) =>
      locked(async () => {
        const now = Date.now();
        const calls = (await readHeld(heldPath)).filter(
          (call) => call.approvalId !== entry.approvalId && Date.parse(call.expiresAt) > now,
        );
        await writeHeld(heldPath, [...calls, entry].slice(-200));
      }),
    release: (approvalId) =>
      locked(async () => {
        const calls = await readHeld(heldPath);
        if (calls.some((call) => call.approvalId === approvalId))
          await writeHeld(
            heldPath,
            calls.filter((call) => call.approvalId !== approvalId),
          );
      }),
    list: () => locked(() => readHeld(heldPath)),
    get: async (approvalId) => (await held.list()).find((call) => call.approvalId === approvalId),
  };

  return { approvals, held, dir };
}
