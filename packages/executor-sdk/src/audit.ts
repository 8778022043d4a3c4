import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Caller } from './context.ts';

/** One audit line: one invocation (or one refusal). Absent values are `null`, so every line has every field. */
export interface AuditEntry {
  ts: string;
  trace_id: string;
  turn_id: string | null;
  executor: string;
  version: string | null;
  caller: Caller;
  input: Record<string, unknown>;
  output: { size: number; sha: string | null };
  duration_ms: number;
  exit: 'ok' | 'error' | 'policy' | 'crash' | 'timeout' | 'refused';
  error_class?: string;
  isolation?: string;
}

const MAX_STRING = 200;

/**
 * A short, bounded picture of the arguments: strings cut to 200 characters
 * with their length, nested values cut to depth 3, at most 32 keys.
 */
export function summarizeInput(args: unknown, depth = 0): Record<string, unknown> {
  const summarize = (value: unknown, level: number): unknown => {
    if (typeof value === 'string') {
      return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…(${value.length} chars)` : value;
    }
    if (value === null || typeof value !== 'object') return value;
    if (level >= 3) return Array.isArray(value) ? `[array of ${value.length}]` : '[object]';
    if (Array.isArray(value)) return value.slice(0, 16).map((item) => summarize(item, level + 1));
    const entries = Object.entries(value).slice(0, 32);
    return Object.fromEntries(entries.map(([key, item]) => [key, summarize(item, level + 1)]));
  };
  const summary = summarize(args, depth);
  return summary !== null && typeof summary === 'object' && !Array.isArray(summary)
    ? (summary as Record<string, unknown>)
    : { value: summary };
}

/** Settings of {@link createAuditLog}. */
export interface AuditLogSettings {
  /** Lines go to `<workspace>/.audit/executors/YYYY-MM-DD.jsonl`. */
  workspace: string;
}

/**
 * The append-only invocation log: one JSON line per call, in a file per UTC
 * day, opened in append mode for every write.
 *
 * @example
 * const audit = createAuditLog({ workspace: '/home/me/metnos' });
 * await audit.append(entry);
 */
export function createAuditLog(settings: AuditLogSettings) {
  const dir = join(settings.workspace, '.audit', 'executors');
  let ready: Promise<unknown> | undefined;
  return {
    dir,
    /** The file for the day of `ts`. */
    fileFor(ts: string): string {
      return join(dir, `${ts.slice(0, 10)}.jsonl`);
    },
    async append(entry: AuditEntry): Promise<void> {
      ready ??= mkdir(dir, { recursive: true, mode: 0o700 });
      await ready;
      await appendFile(join(dir, `${entry.ts.slice(0, 10)}.jsonl`), `${JSON.stringify(entry)}\n`, {
        flag: 'a',
        mode: 0o600,
      });
    },
  };
}

export type AuditLog = ReturnType<typeof createAuditLog>;
