import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { executorCode, sandboxToml, useTempDirs } from './__fixtures__/index.ts';
import type { AuditEntry } from './audit.ts';
import { createAuditLog } from './audit.ts';
import { type Catalog, createCatalog } from './catalog.ts';
import { MAX_JSON_DEPTH } from './depth.ts';
import { createInvoker, type InvokeOptions } from './invoke.ts';
import { generateSigningKey } from './keys.ts';
import { createProcessRunner, type ExecutorRunner } from './runner.ts';
import { writeSignedExecutor } from './test/index.ts';

const temp = useTempDirs('metnos-invoke-guards-');
const NOW = new Date('2026-05-02T10:00:00.000Z');
const DEEP = 20_000;

/** `levels` arrays inside each other, built without recursion. */
function nestedArrays(levels: number): unknown {
  let value: unknown = [];
  for (let level = 1; level < levels; level++) value = [value];
  return value;
}

/** Code that writes its own result line with `field` holding DEEP nested arrays. */
function deepResultCode(field: 'content' | 'metadata'): string {
  const value = `'{"a":' + '['.repeat(${DEEP}) + ']'.repeat(${DEEP}) + '}'`;
  return executorCode(
    `writeSync(1, '{"ok":true,"${field}":' + ${value} + '}\\n'); process.exit(0);`,
    `import { writeSync } from 'node:fs';`,
  );
}

let catalog: Catalog;

beforeAll(async () => {
  const root = await temp.make('root-');
  const key = await generateSigningKey();
  const toml = sandboxToml({ maxOutputBytes: 1024 * 1024 });
  await writeSignedExecutor({ root, name: 'echo', key, sandboxToml: toml });
  await writeSignedExecutor({
    root,
    name: 'quiet',
    key,
    sandboxToml: toml,
    code: executorCode('return ok({});'),
  });
  await writeSignedExecutor({
    root,
    name: 'deep_content',
    key,
    sandboxToml: toml,
    code: deepResultCode('content'),
  });
  await writeSignedExecutor({
    root,
    name: 'deep_metadata',
    key,
    sandboxToml: toml,
    code: deepResultCode('metadata'),
  });
  catalog = createCatalog({ root, trustedKeys: [key] });
  expect((await catalog.load()).quarantined).toEqual([]);
});

/** An invoker with its own workspace, and the one line its audit log holds. */
async function invokerWith(runner: ExecutorRunner = createProcessRunner()) {
  const workspace = await temp.make('workspace-');
  const invoker = createInvoker({ catalog, runner, audit: createAuditLog({ workspace }), clock: () => NOW });
  const options: InvokeOptions = { workspace, caller: { kind: 'cli' } };
  const auditLine = async (): Promise<AuditEntry> => {
    const text = await readFile(join(workspace, '.audit', 'executors', '2026-05-02.jsonl'), 'utf8');
    return JSON.parse(text);
  };
  return { invoker, options, auditLine };
}

describe('nesting limits at the invocation boundary', () => {
  it(`refuses arguments nested deeper than ${MAX_JSON_DEPTH} levels with InvalidInput, and audits the refusal`, async () => {
    const { invoker, options, auditLine } = await invokerWith();
    const result = await invoker.invoke('echo', { data: nestedArrays(10_000) }, options);
    expect(result).toEqual({
      ok: false,
      error: {
        class: 'InvalidInput',
        message: expect.stringContaining(`deeper than ${MAX_JSON_DEPTH} levels`),
      },
    });
    expect(await auditLine()).toMatchObject({
      executor: 'echo',
      version: '1.0.0',
      exit: 'policy',
      error_class: 'InvalidInput',
    });
  });

  it(`still runs arguments exactly ${MAX_JSON_DEPTH} levels deep, and returns a result that deep`, async () => {
    const { invoker, options } = await invokerWith();
    const args = { data: nestedArrays(MAX_JSON_DEPTH - 1) };
    expect(await invoker.invoke('quiet', args, options)).toMatchObject({ ok: true, content: {} });
    const echoed = { data: nestedArrays(MAX_JSON_DEPTH - 2) };
    expect(await invoker.invoke('echo', echoed, options)).toMatchObject({
      ok: true,
      content: { echo: echoed },
    });
  });

  it('refuses content or metadata nested too deeply as InvalidOutput, whatever the process wrote', async () => {
    for (const name of ['deep_content', 'deep_metadata']) {
      const { invoker, options, auditLine } = await invokerWith();
      const result = await invoker.invoke(name, {}, options);
      expect([name, result]).toEqual([
        name,
        {
          ok: false,
          error: {
            class: 'InvalidOutput',
            message: expect.stringContaining(`deeper than ${MAX_JSON_DEPTH} levels`),
          },
          isolation: expect.objectContaining({ tier: 'none' }),
        },
      ]);
      expect(() => JSON.stringify(result)).not.toThrow();
      expect(await auditLine()).toMatchObject({ exit: 'error', error_class: 'InvalidOutput' });
    }
  });
});

describe('an unexpected failure inside the invocation', () => {
  it('resolves to a Crashed result with an audit line instead of rejecting', async () => {
    const exploding: ExecutorRunner = {
      tier: 'none',
      run: async () => {
        throw new TypeError('the runner fell over');
      },
    };
    const { invoker, options, auditLine } = await invokerWith(exploding);
    const result = await invoker.invoke('echo', { a: 1 }, options);
    expect(result).toEqual({
      ok: false,
      error: { class: 'Crashed', message: expect.stringContaining('the runner fell over') },
    });
    expect(await auditLine()).toMatchObject({
      executor: 'echo',
      exit: 'crash',
      error_class: 'Crashed',
    });
  });
});
