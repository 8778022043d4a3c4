import { appendFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type AuditEntry, appendToAuditTree, createAuditLog } from '@metnos/executor-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectRefusal, scratch, serveApi } from './routes-helpers.ts';

let api: Awaited<ReturnType<typeof serveApi>>;
let linked: Awaited<ReturnType<typeof serveApi>>;
const OUTSIDE = 'OUTSIDE-THE-AUDIT-TREE';

const entry = (ts: string, trace: string, executor = 'fs_read'): AuditEntry => ({
  ts,
  trace_id: trace,
  turn_id: null,
  executor,
  version: '1.0.0',
  caller: { kind: 'cli' },
  input: { path: 'diary.md' },
  output: { size: 3, sha: null },
  duration_ms: 4,
  exit: 'ok',
});

beforeAll(async () => {
  const root = await scratch('routes-audit');
  const workspace = join(root, 'workspace');
  const audit = createAuditLog({ workspace });
  await audit.append(entry('2026-05-01T09:00:00.000Z', 'trace-1'));
  await audit.append(entry('2026-05-01T11:00:00.000Z', 'trace-2'));
  await audit.append(entry('2026-05-02T08:00:00.000Z', 'trace-1', 'mail_send'));
  await appendToAuditTree(
    workspace,
    'sandbox',
    '2026-05-01T10:00:00.000Z',
    JSON.stringify({
      ts: '2026-05-01T10:00:00.000Z',
      trace_id: 'trace-1',
      executor: 'fs_read',
      refused: 'profile',
    }),
  );
  // a torn line and a line that is not an object
  await appendFile(
    join(workspace, '.audit', 'executors', '2026-05-02.jsonl'),
    '{"ts":"2026-05-02T09\n[1,2]\n',
  );
  // links out of the tree: a day file, and in a second tree the whole executors folder
  const outside = join(root, 'outside');
  await mkdir(outside);
  await writeFile(
    join(outside, 'secret.jsonl'),
    `${JSON.stringify(entry('2026-05-03T00:00:00.000Z', 'trace-1', OUTSIDE))}\n`,
  );
  await writeFile(
    join(outside, '2026-05-03.jsonl'),
    `${JSON.stringify(entry('2026-05-03T00:00:00.000Z', 'trace-1', OUTSIDE))}\n`,
  );
  await symlink(join(outside, 'secret.jsonl'), join(workspace, '.audit', 'executors', '2026-05-03.jsonl'));
  const other = join(root, 'other', '.audit');
  await mkdir(other, { recursive: true });
  await symlink(outside, join(other, 'executors'));
  api = await serveApi({ audit: { auditDir: join(workspace, '.audit') } });
  linked = await serveApi({ audit: { auditDir: other } });
});

afterAll(async () => {
  await api?.server.close();
  await linked?.server.close();
});

interface Answer {
  entries: Array<{ ts: string; trace_id: string; executor: string; folder: string }>;
  total: number;
  truncated: boolean;
  unreadable: number;
}
async function read(path: string, server = api): Promise<Answer> {
  const response = await server.call(path);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  expect(text).not.toContain(OUTSIDE);
  return JSON.parse(text) as Answer;
}

describe('the audit route', () => {
  it('answers nothing without the bearer token', async () => {
    await expectRefusal(await api.call('/api/audit?day=2026-05-01', {}, 'nope'), 401, 'unauthorized');
  });

  it("reads one day's lines from both folders, oldest first", async () => {
    const day = await read('/api/audit?day=2026-05-01');
    expect(day.entries.map((line) => [line.folder, line.trace_id])).toEqual([
      ['executors', 'trace-1'],
      ['sandbox', 'trace-1'],
      ['executors', 'trace-2'],
    ]);
    expect(day).toMatchObject({ total: 3, truncated: false, unreadable: 0 });
    expect((await read('/api/audit?day=2026-05-01&folder=sandbox')).entries).toHaveLength(1);
    const last = await read('/api/audit?day=2026-05-01&limit=1');
    expect(last.entries.map((line) => line.trace_id)).toEqual(['trace-2']);
    expect(last.truncated).toBe(true);
    expect(await read('/api/audit?day=2026-06-01')).toMatchObject({ entries: [], total: 0 });
    expect((await read('/api/audit?day=2026-05-02')).unreadable).toBe(2);
  });

  it("finds one trace's lines across days", async () => {
    const trace = await read('/api/audit?trace=trace-1');
    expect(trace.entries.map((line) => [line.ts.slice(0, 10), line.executor])).toEqual([
      ['2026-05-01', 'fs_read'],
      ['2026-05-01', 'fs_read'],
      ['2026-05-02', 'mail_send'],
    ]);
    expect((await read('/api/audit?trace=trace-1&day=2026-05-02')).entries).toHaveLength(1);
    expect((await read('/api/audit?trace=nobody')).entries).toEqual([]);
  });

  it('never follows a link out of the audit folder', async () => {
    expect((await read('/api/audit?day=2026-05-03')).entries).toEqual([]);
    expect((await read('/api/audit?day=2026-05-03', linked)).entries).toEqual([]);
    expect((await read('/api/audit?trace=trace-1', linked)).entries).toEqual([]);
  });

  it('refuses a day that is not a date, a bad trace id and any other parameter', async () => {
    for (const query of [
      '',
      'day=yesterday',
      'day=2026-13-01',
      'day=2026-02-30',
      'day=2026-5-1',
      'day=..%2F..%2Fetc%2Fpasswd',
      'day=2026-05-01%2F..%2F..',
      'trace=..%2Fx',
      `trace=${'t'.repeat(200)}`,
      `trace=${'t'.repeat(5000)}`,
      'day=2026-05-01&day=2026-05-02',
      'day=2026-05-01&folder=..',
      'day=2026-05-01&limit=501',
      'day=2026-05-01&path=%2Fetc',
      '__proto__=1&day=2026-05-01',
    ])
      await expectRefusal(await api.call(`/api/audit?${query}`), 400, 'invalid');
    // a long value is refused before any pattern runs over it
    const long = await expectRefusal(await api.call(`/api/audit?trace=${'t'.repeat(5000)}`), 400);
    expect(long.message).toBe('the parameter "trace" is too long');
  });
});
