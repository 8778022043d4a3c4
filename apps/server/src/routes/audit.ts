import { constants } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { AUDIT_SUBDIRS } from '@metnos/executor-sdk';
import type { Hono } from 'hono';
import { z } from 'zod';
import type { RouteDoc } from '../openapi.ts';
import { limitParam, readQuery, refuse } from './common.ts';

/** What {@link registerAuditRoutes} reads: a workspace's audit tree. */
export interface AuditRouteDeps {
  /** The workspace's `.audit` folder (`<workspace>/.audit`). */
  auditDir: string;
}

/** At most this much of one day's file is read. */
const MAX_FILE_BYTES = 8 * 1024 * 1024;
/** At most this much is read for one answer, over every file. */
const MAX_READ_BYTES = 32 * 1024 * 1024;
/** A trace is looked for in the files of this many latest days. */
const TRACE_DAYS = 31;
const DAY_FILE = /^\d{4}-\d{2}-\d{2}\.jsonl$/;

/** A calendar date: the form, and a day that exists (2026-02-30 does not). */
const dayParam = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'a day as YYYY-MM-DD')
  .refine((day) => {
    const date = new Date(`${day}T00:00:00Z`);
    return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === day;
  }, 'not a day of the calendar');

const auditQuery = z
  .object({
    day: dayParam.optional(),
    trace: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'not a trace id')
      .optional(),
    folder: z.enum(AUDIT_SUBDIRS).optional(),
    limit: limitParam.optional(),
  })
  .strict()
  .refine((query) => query.day !== undefined || query.trace !== undefined, {
    message: 'give ?day=YYYY-MM-DD or ?trace=<id>',
    path: ['day'],
  });

type Folder = (typeof AUDIT_SUBDIRS)[number];

/** The route {@link registerAuditRoutes} mounts, for the OpenAPI document. */
export const auditRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/api/audit',
    summary: "a day's audit lines, or one trace's, oldest first",
    description:
      'One of `day` and `trace` is required; `day` must be a day of the calendar. A trace is looked for in the last 31 days (or `day`). Past `limit` (default 100) the latest lines are kept and `truncated` is true.',
    query: auditQuery,
    refusals: [400],
  },
];

/** A folder of the tree, only when it is a real folder (a link is never followed). */
async function realFolder(path: string): Promise<boolean> {
  const info = await lstat(path).catch(() => undefined);
  if (!info) return false;
  return info.isDirectory() && !info.isSymbolicLink();
}

/**
 * One day's file, opened without following a link (`O_NOFOLLOW`), read only
 * when it is a plain file, at most `budget` bytes of it.
 */
async function readDayFile(
  path: string,
  budget: number,
): Promise<{ text: string; cut: boolean } | undefined> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    () => undefined,
  );
  if (!handle) return undefined;
  try {
    const info = await handle.stat();
    if (!info.isFile()) return undefined;
    const size = Math.min(info.size, budget);
    const bytes = Buffer.alloc(size);
    const { bytesRead } = await handle.read(bytes, 0, size, 0);
    let text = bytes.subarray(0, bytesRead).toString('utf8');
    const cut = info.size > bytesRead;
    // a file read in part ends at its last whole line
    if (cut) text = text.slice(0, text.lastIndexOf('\n') + 1);
    return { text, cut };
  } finally {
    await handle.close();
  }
}

/**
 * The audit routes: the JSONL audit tree the invoker (`executors/`) and the
 * sandbox (`sandbox/`) write, read only, bounded, never through a link.
 *
 * - `GET /api/audit?day=YYYY-MM-DD[&folder=executors|sandbox][&limit=]` that day's lines
 * - `GET /api/audit?trace=<id>[&day=…][&folder=…][&limit=]` the lines of one trace, from the
 *   last 31 days' files (or that day's)
 *
 * Lines come oldest first; past `limit` (default 100, at most 500) the latest are kept
 * and `truncated` is true, as it is when a file was larger than 8 MiB.
 *
 * @example
 * registerAuditRoutes(app, { auditDir: join(workspace, '.audit') });
 */
export function registerAuditRoutes(app: Hono, deps: AuditRouteDeps): void {
  app.get('/api/audit', async (c) => {
    const query = readQuery(c, auditQuery);
    if (!query.ok) return refuse(c, query.status, query.error, query.message);
    const { day, trace, folder } = query.value;
    const limit = query.value.limit ?? 100;
    const entries: Array<Record<string, unknown> & { folder: Folder }> = [];
    let truncated = false;
    let unreadable = 0;
    let budget = MAX_READ_BYTES;
    if (await realFolder(deps.auditDir)) {
      for (const sub of folder ? [folder] : AUDIT_SUBDIRS) {
        const dir = join(deps.auditDir, sub);
        if (!(await realFolder(dir))) continue;
        const names = day
          ? [`${day}.jsonl`]
          : (await readdir(dir, { withFileTypes: true }))
              .filter((entry) => entry.isFile() && DAY_FILE.test(entry.name))
              .map((entry) => entry.name)
              .sort()
              .slice(-TRACE_DAYS);
        for (const name of names) {
          if (budget <= 0) {
            truncated = true;
            break;
          }
          const file = await readDayFile(join(dir, name), Math.min(MAX_FILE_BYTES, budget));
          if (!file) continue;
          budget -= Buffer.byteLength(file.text);
          if (file.cut) truncated = true;
          for (const line of file.text.split('\n')) {
            if (!line.trim()) continue;
            let value: unknown;
            try {
              value = JSON.parse(line);
            } catch {
              unreadable++;
              continue;
            }
            if (value === null || typeof value !== 'object' || Array.isArray(value)) {
              unreadable++;
              continue;
            }
            const row = value as Record<string, unknown>;
            if (trace !== undefined && row.trace_id !== trace) continue;
            entries.push({ ...row, folder: sub });
          }
        }
      }
    }
    entries.sort((a, b) => String(a.ts ?? '').localeCompare(String(b.ts ?? '')));
    if (entries.length > limit) truncated = true;
    return c.json({
      day: day ?? null,
      trace: trace ?? null,
      entries: entries.slice(-limit),
      total: entries.length,
      truncated,
      unreadable,
    });
  });
}
