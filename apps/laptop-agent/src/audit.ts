import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { appendJsonLine } from '@metnos/executor-sdk';
import type { SandboxAuditEntry } from '@metnos/sandbox';
import type { LaptopAudit } from './protocol/frames.ts';

/**
 * The laptop's own audit log: one JSON line per remote call (the paths it
 * touched and their hashes after, correlated with the server's line by trace
 * id), per refused call, and per sandbox refusal, in
 * `<state>/audit/YYYY-MM-DD.jsonl`, mode 0600. It lives in the agent's state
 * folder, which no executor may write, not in the granted folder.
 *
 * @example
 * const audit = createLaptopAuditLog({ dir: join(stateDir, 'audit') });
 * await audit.append(line);
 */
export function createLaptopAuditLog(settings: { dir: string }) {
  const fileFor = (ts: string) => join(settings.dir, `${ts.slice(0, 10)}.jsonl`);
  const write = async (ts: string, line: unknown) => {
    await mkdir(settings.dir, { recursive: true, mode: 0o700 });
    await appendJsonLine(fileFor(ts), JSON.stringify(line), { mode: 0o600 });
  };
  return {
    dir: settings.dir,
    fileFor,
    /** One call's line. */
    append: (line: LaptopAudit) => write(line.ts, line),
    /** A refusal of the sandbox, before any process started. */
    sandbox: (entry: SandboxAuditEntry) => write(entry.ts, { kind: 'sandbox', ...entry }),
  };
}

export type LaptopAuditLog = ReturnType<typeof createLaptopAuditLog>;
