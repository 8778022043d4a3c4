import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_JSON_DEPTH } from '@metnos/executor-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, repoRoot, STACK_LINE } from './__fixtures__/cli.ts';

let work: string;
const savedEnv = { ...process.env };

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-cli-limits-'));
  process.env.METNOS_CONFIG_DIR = join(work, 'config');
  process.env.INIT_CWD = work;
});

afterAll(async () => {
  process.env = savedEnv;
  await rm(work, { recursive: true, force: true });
});

describe('input nested deeper than MAX_JSON_DEPTH on the command line', () => {
  it('refuses --args of json_query nested 10,000 levels as a usage error naming the limit', async () => {
    const data = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const result = await cli([
      'executor',
      'run',
      'json_query',
      '--executors',
      join(repoRoot, 'executors'),
      '--workspace',
      work,
      '--args',
      `{"data":${data},"query":"."}`,
    ]);
    expect(result.code).toBe(2);
    expect(result.err).toContain(`--args nests deeper than ${MAX_JSON_DEPTH} levels`);
    expect(result.err).not.toMatch(STACK_LINE);
  });

  it('refuses to sign or verify an executor whose schema.json nests 20,000 levels, without a stack trace', async () => {
    expect((await cli(['keys', 'init'])).code).toBe(0);
    expect((await cli(['executor', 'new', 'deep', '--in', '.'])).code).toBe(0);
    expect((await cli(['executor', 'sign', 'deep'])).code).toBe(0);
    const levels = 20_000;
    await writeFile(
      join(work, 'deep', 'schema.json'),
      `{"definitions":{"Input":{"type":"object"},"Output":${'{"items":'.repeat(levels)}{}${'}'.repeat(levels)}}}`,
    );
    const signed = await cli(['executor', 'sign', 'deep']);
    expect(signed.code).toBe(1);
    expect(signed.err).toContain(`schema.json nests deeper than ${MAX_JSON_DEPTH} levels`);
    expect(signed.err).not.toMatch(STACK_LINE);
    const verified = await cli(['executor', 'verify', 'deep']);
    expect(verified.code).toBe(1);
    expect(verified.err).toContain('reason: schema_invalid');
    expect(verified.err).toContain(`nests deeper than ${MAX_JSON_DEPTH} levels`);
    expect(verified.err).not.toMatch(STACK_LINE);
  });
});
