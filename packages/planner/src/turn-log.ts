import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { appendJsonLine, readJsonLines } from '@metnos/executor-sdk';

/** One step of a turn as the log records it. */
export interface TurnLogStep {
  number: number;
  tokens_in: number;
  tokens_out: number;
  latency_ms: number;
  tool: string | null;
  raw_args: unknown;
  resolved_args: unknown;
  validation: 'ok' | 'rejected' | 'skipped';
  vaglio: { approved: boolean; blocked_by: string | null; score: number; reason: string } | null;
  sandbox: string | null;
  result: unknown;
}

/** One line per turn. */
export interface TurnLogEntry {
  turn_id: string;
  ts_start: number;
  ts_end: number;
  user_query: string;
  mode: 'local' | 'online' | 'hybrid';
  routed_mode?: 'local' | 'online';
  candidates: string[];
  steps: TurnLogStep[];
  final_message: string;
  final_kind: string;
  tokens: { input: number; output: number };
  cost_usd: number | undefined;
}

/**
 * The append-only turn log: one JSON line per turn in `<dir>/YYYY-MM-DD.jsonl`.
 * Every line starts on a fresh line, even after a partial one left by a crash;
 * `read(day)` skips a line that does not parse.
 *
 * @example
 * const log = createTurnLog({ dir: join(homedir(), '.local/share/metnos/turns') }); // no `~`: a path is taken as written
 */
export function createTurnLog(settings: { dir: string }) {
  let ready: Promise<unknown> | undefined;
  return {
    dir: settings.dir,
    async append(entry: TurnLogEntry): Promise<void> {
      ready ??= mkdir(settings.dir, { recursive: true });
      await ready;
      const day = new Date(entry.ts_start * 1000).toISOString().slice(0, 10);
      await appendJsonLine(join(settings.dir, `${day}.jsonl`), JSON.stringify(entry));
    },
    /** The turns of one UTC day (`YYYY-MM-DD`), in order; none when the day has no file. */
    async read(day: string): Promise<TurnLogEntry[]> {
      const text = await readFile(join(settings.dir, `${day}.jsonl`), 'utf8').catch((error) => {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
        throw error;
      });
      return readJsonLines(text).records as TurnLogEntry[];
    },
  };
}

export type TurnLog = ReturnType<typeof createTurnLog>;
