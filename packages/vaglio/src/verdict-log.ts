import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { appendJsonLine, readJsonLines } from '@metnos/executor-sdk';
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
  /** The verdicts of one UTC month (`YYYY-MM`), in order, skipping a line that does not parse. */
  read(month: string): Promise<VerdictLogEntry[]>;
}

/**
 * The monthly JSONL log: one file per UTC month, named from the verdict's
 * timestamp (which comes from the vaglio's injected clock). Appends are
 * serialised so lines keep their order, and each starts on a fresh line even
 * when the file ends in a partial one (a crash, a full disk).
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
      const line = JSON.stringify(entry);
      const write = async () => {
        try {
          if (!made) {
            await mkdir(settings.dir, { recursive: true });
            made = true;
          }
          await appendJsonLine(file, line, { mode: 0o600 });
        } catch (error) {
          throw new VerdictLogError({ file, cause: error });
        }
      };
      queue = queue.catch(() => undefined).then(write);
      return queue;
    },
    async read(month) {
      const text = await readFile(join(settings.dir, `${month}.jsonl`), 'utf8').catch((error) => {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
        throw error;
      });
      return readJsonLines(text).records as VerdictLogEntry[];
    },
  };
}
