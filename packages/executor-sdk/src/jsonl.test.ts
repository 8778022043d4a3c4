import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/index.ts';
import { appendJsonLine, readJsonLines } from './jsonl.ts';

const temp = useTempDirs('metnos-jsonl-');

describe('JSONL logs', () => {
  it('start every record on a fresh line, also after a partial last line', async () => {
    const file = join(await temp.make(), 'log.jsonl');
    await appendJsonLine(file, '{"n":1}', { mode: 0o600 });
    await writeFile(file, '{"n":2,"cut sh', { flag: 'a' });
    await appendJsonLine(file, '{"n":3}');
    await appendJsonLine(file, '{"n":4}');
    expect(await readFile(file, 'utf8')).toBe('{"n":1}\n{"n":2,"cut sh\n{"n":3}\n{"n":4}\n');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('are read record by record, skipping a line that does not parse', async () => {
    expect(readJsonLines('{"n":1}\n{"n":2,"cut sh\n\n{"n":3}\n')).toEqual({
      records: [{ n: 1 }, { n: 3 }],
      skipped: 1,
    });
    expect(readJsonLines('')).toEqual({ records: [], skipped: 0 });
  });
});
