import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { VerdictLogError } from './errors.ts';
import type { BlockedBy, JudgeKind } from './types.ts';

/**
 * One line of the vaglio log. It records the argument keys (top level),
 * never their values: the log can be read without exposing what was asked.
 */
export interface VerdictLogEntry {
  ts: string;
  turn_id: string | null;
  step: number | null;
  executor: string;
  executor_version: string;
  arg_keys: string[];
  approved: boolean;
  blocked_by: BlockedBy;
  score: number;
  judge_kind: JudgeKind;
  reason: string;
}

/** Appends verdict lines to `<dir>/YYYY-MM.jsonl`. */
export interface VerdictLog {
  append(entry: VerdictLogEntry): Promise<void>;
  /** The file an entry with this timestamp goes to. */
  fileFor(ts: string): string;
}

/**
 * The monthly JSONL log: one file per UTC month, named from the verdict's
 * timestamp (which comes from the vaglio's injected clock). Appends are
 * serialised so lines keep their order.
 *
 * @example
 * const log = createVerdictLog({ dir: '/home/ada/.local/share/metnos/vaglio' });
 * log.fileFor('2026-04-27T10:00:00.000Z'); // '/home/ada/.local/share/metnos/vaglio/2026-04.jsonl'
 */
export function createVerdictLog(settings: { dir: string }): VerdictLog {
  let queue: Promise<void> = Promise.resolve();
  let made = false;

  function fileFor(ts: string): string {
    const date = new Date(ts);
    const month = `${date.getUTCFullYear()}-${String(date.getUTCMonth() + 1).padStart(2, '0')}`;
    return join(settings.dir, `${month}.jsonl`);
  }

  return {
    fileFor,
    append(entry) {
      const file = fileFor(entry.ts);
      const line = `${JSON.stringify(entry)}\n`;
      const write = async () => {
        try {
          if (!made) {
            await mkdir(settings.dir, { recursive: true });
            made = true;
          }
          await appendFile(file, line, { mode: 0o600 });
        } catch (error) {
          throw new VerdictLogError({ file, cause: error });
        }
      };
      queue = queue.catch(() => undefined).then(write);
      return queue;
    },
  };
}
