import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { executorCode, sandboxToml, useTempDirs } from './__fixtures__/index.ts';
import { type AuditEntry, createAuditLog, summarizeInput } from './audit.ts';
import { type Catalog, createCatalog } from './catalog.ts';
import { blake3Digest } from './hash.ts';
import { createInvoker, type InvokeOptions } from './invoke.ts';
import { generateSigningKey } from './keys.ts';
import { createProcessRunner } from './runner.ts';
import { writeSignedExecutor } from './test/index.ts';

const temp = useTempDirs('metnos-invoke-');
const NOW = new Date('2026-04-25T08:14:33.881Z');

const strictSchema = {
  definitions: {
    Input: {
      type: 'object',
      properties: { name: { type: 'string', maxLength: 50 }, count: { type: 'integer', minimum: 0 } },
      required: ['name'],
      additionalProperties: false,
    },
    Output: {
      type: 'object',
      properties: { greeting: { type: 'string' }, count: { type: 'integer' } },
      required: ['greeting'],
      additionalProperties: false,
    },
  },
};

let root: string;
let workspace: string;
let markers: string;
let catalog: Catalog;
let invoker: ReturnType<typeof createInvoker>;
let options: InvokeOptions;

/** Every executor the tests call, by name. */
function executors(
  markerDir: string,
): Record<string, Omit<Parameters<typeof writeSignedExecutor>[0], 'root' | 'name' | 'key'>> {
  return {
    greet: {
      schema: strictSchema,
      code: executorCode(
        `console.log('log line', { a: 1 }); console.info('info'); console.warn('warn'); console.error('error'); ctx.log('ctx.log');
        return ok({ greeting: 'Hello, ' + args.name + '!', ...(args.count === undefined ? {} : { count: args.count }) });`,
        `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(join(markerDir, 'greet'))}, 'loaded\\n');`,
      ),
    },
    context: {
      code: executorCode(
        `return ok({ traceId: ctx.traceId, turnId: ctx.turnId, workspace: ctx.workspace, tmpDir: ctx.tmpDir,
          tmpExists: existsSync(ctx.tmpDir), config: ctx.config, read: ctx.profile.fs.read, cwd: process.cwd(),
          deadlineAhead: ctx.deadline > Date.now(), secret: process.env.METNOS_TEST_SECRET ?? null });`,
        `import { existsSync } from 'node:fs';`,
      ),
    },
    bad_output: { schema: strictSchema, code: executorCode(`return ok({ greeting: 42 });`) },
    bypass_output: {
      schema: strictSchema,
      code: executorCode(
        `writeSync(1, JSON.stringify({ ok: true, content: { greeting: 42 } }) + '\\n'); process.exit(0);`,
        `import { writeSync } from 'node:fs';`,
      ),
    },
    stdout_chatter: { code: executorCode(`process.stdout.write('progress: 50%\\n'); return ok({});`) },
    not_json: {
      code: executorCode(
        `writeSync(1, 'all done, no JSON here\\n'); process.exit(0);`,
        `import { writeSync } from 'node:fs';`,
      ),
    },
    exits: { code: executorCode(`process.exit(3);`) },
    throws_failure: {
      errorClasses: ['NotFound'],
      code: executorCode(
        `throw new ExecutorFailure('NotFound', 'thrown, not returned');`,
        `import { ExecutorFailure } from '@metnos/executor-sdk/define';`,
      ),
    },
    no_definition: { code: `export default { run() { return { ok: true, content: {} }; } };\n` },
    throws: { code: executorCode(`throw new Error('boom at line one');`) },
    fails_declared: {
      errorClasses: ['NotFound'],
      code: executorCode(`return fail('NotFound', 'no such note');`),
    },
    fails_undeclared: {
      errorClasses: ['NotFound'],
      code: executorCode(`return fail('Exploded', 'not in the manifest');`),
    },
    bypass_undeclared: {
      errorClasses: ['NotFound'],
      code: executorCode(
        `writeSync(1, JSON.stringify({ ok: false, error: { class: 'Exploded', message: 'x' } }) + '\\n'); process.exit(0);`,
        `import { writeSync } from 'node:fs';`,
      ),
    },
    too_large: {
      sandboxToml: sandboxToml({ maxOutputBytes: 1024 }),
      code: executorCode(`return ok({ blob: 'x'.repeat(64 * 1024) });`),
    },
    sleeper: {
      sandboxToml: sandboxToml({ maxDurationMs: 5000 }),
      code: executorCode(
        `const child = spawn('sleep', ['300'], { stdio: 'inherit', detached: args.detached === true });
        writeFileSync(args.pidFile, String(child.pid));
        await new Promise(() => setInterval(() => {}, 1000));`,
        `import { spawn } from 'node:child_process';\nimport { writeFileSync } from 'node:fs';`,
      ),
    },
    imports_package: { code: executorCode(`return ok({});`, `import extra from 'fs-extra';\nvoid extra;`) },
    imports_relative: { code: executorCode(`return ok(helper());`, `import { helper } from './helper.ts';`) },
    requires_package: {
      code: executorCode(
        `const require = createRequire(import.meta.url); return ok({ loaded: typeof require('fs-extra') });`,
        `import { createRequire } from 'node:module';`,
      ),
    },
    imports_dynamic: { code: executorCode(`await import('fs-extra'); return ok({});`) },
    uses_builtins: {
      code: executorCode(
        `const row = new DatabaseSync(':memory:').prepare('select 1 + 1 as two').get();
        return ok({ two: row.two, sep: path.sep, hash: createHash('sha256').update('x').digest('hex').length });`,
        `import { DatabaseSync } from 'node:sqlite';\nimport path from 'path';\nimport { createHash } from 'node:crypto';`,
      ),
    },
    wants_sandbox: { sandboxToml: sandboxToml({ minTier: 'standard' }) },
    newer_draft: {
      schema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        definitions: { Input: { type: 'object' }, Output: { type: 'object' } },
      },
    },
  };
}

beforeAll(async () => {
  root = await temp.make('root-');
  workspace = await temp.make('workspace-');
  markers = await temp.make('markers-');
  const key = await generateSigningKey();
  for (const [name, settings] of Object.entries(executors(markers))) {
    await writeSignedExecutor({ root, name, key, sandboxToml: sandboxToml(), ...settings });
  }
  await writeFile(
    join(root, 'imports_relative', 'helper.ts'),
    'export const helper = () => ({ sneaky: true });\n',
  );
  catalog = createCatalog({ root, trustedKeys: [key] });
  const report = await catalog.load();
  expect(report.quarantined).toEqual([]);
  invoker = createInvoker({
    catalog,
    runner: createProcessRunner(),
    audit: createAuditLog({ workspace }),
    clock: () => NOW,
  });
  options = { workspace, caller: { kind: 'user', sender: 'ada', channel: 'cli' } };
});

async function auditLines(): Promise<AuditEntry[]> {
  const text = await readFile(join(workspace, '.audit', 'executors', '2026-04-25.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

describe('invoking an executor', () => {
  it('runs it and returns its content; console output inside run() does not reach the result', async () => {
    const result = await invoker.invoke('greet', { name: 'Ada', count: 2 }, options);
    expect(result).toEqual({
      ok: true,
      content: { greeting: 'Hello, Ada!', count: 2 },
      isolation: { tier: 'none', layers: ['process'] },
    });
  });

  it('gives the code its context: trace, workspace, config, a private temp dir removed afterwards', async () => {
    const result = await invoker.invoke(
      'context',
      {},
      { ...options, traceId: 'trace-context', turnId: 'turn-7', config: { city: 'Turin' } },
    );
    expect(result.ok).toBe(true);
    const content = (result as { content: Record<string, unknown> }).content;
    expect(content).toMatchObject({
      traceId: 'trace-context',
      turnId: 'turn-7',
      workspace,
      tmpExists: true,
      config: { city: 'Turin' },
      read: [workspace],
      deadlineAhead: true,
      secret: null,
    });
    expect(content.cwd).toBe(content.tmpDir);
    expect(existsSync(content.tmpDir as string)).toBe(false);
  });

  it('does not pass the host environment to the executor', async () => {
    process.env.METNOS_TEST_SECRET = 'hunter2';
    try {
      const result = await invoker.invoke('context', {}, options);
      expect(result).toMatchObject({ ok: true, content: { secret: null } });
    } finally {
      delete process.env.METNOS_TEST_SECRET;
    }
  });

  it('rejects input its schema refuses on the host, before any process starts', async () => {
    const marker = join(markers, 'greet');
    const before = existsSync(marker) ? await readFile(marker, 'utf8') : '';
    for (const args of [
      {},
      { name: 'Ada', extra: true },
      { name: 7 },
      { name: 'x'.repeat(51) },
      { name: 'Ada', count: -1 },
      'Ada',
    ]) {
      const result = await invoker.invoke('greet', args, options);
      expect([args, result]).toEqual([
        args,
        { ok: false, error: { class: 'InvalidInput', message: expect.stringContaining("greet's schema") } },
      ]);
    }
    // The code file was never loaded by any of those calls.
    expect(existsSync(marker) ? await readFile(marker, 'utf8') : '').toBe(before);
  });

  it('rejects output its schema refuses, whether the harness or the host catches it', async () => {
    expect(await invoker.invoke('bad_output', { name: 'Ada' }, options)).toMatchObject({
      ok: false,
      error: { class: 'InvalidOutput', message: expect.stringContaining('/greeting') },
    });
    // This one bypasses the harness and writes its own result line: the host still checks it.
    expect(await invoker.invoke('bypass_output', { name: 'Ada' }, options)).toMatchObject({
      ok: false,
      error: {
        class: 'InvalidOutput',
        message: expect.stringContaining('bypass_output returned content its schema rejects'),
      },
    });
  });

  it('returns a declared error class as data, and turns an undeclared one into InvalidOutput', async () => {
    expect(await invoker.invoke('fails_declared', {}, options)).toMatchObject({
      ok: false,
      error: { class: 'NotFound', message: 'no such note' },
    });
    expect(await invoker.invoke('fails_undeclared', {}, options)).toMatchObject({
      ok: false,
      error: { class: 'InvalidOutput', message: expect.stringContaining('"Exploded" is not declared') },
    });
    expect(await invoker.invoke('bypass_undeclared', {}, options)).toMatchObject({
      ok: false,
      error: { class: 'InvalidOutput', message: expect.stringContaining('Exploded') },
    });
  });

  it('reports stdout that is not one JSON result line as NonJsonOutput', async () => {
    expect(await invoker.invoke('stdout_chatter', {}, options)).toMatchObject({
      ok: false,
      error: { class: 'NonJsonOutput', message: expect.stringContaining('extra lines') },
    });
    expect(await invoker.invoke('not_json', {}, options)).toMatchObject({
      ok: false,
      error: { class: 'NonJsonOutput', message: expect.stringContaining('all done, no JSON here') },
    });
  });

  it('turns a thrown ExecutorFailure into its error class', async () => {
    expect(await invoker.invoke('throws_failure', {}, options)).toMatchObject({
      ok: false,
      error: { class: 'NotFound', message: 'thrown, not returned' },
    });
  });

  it('refuses a code file whose default export does not come from defineExecutor', async () => {
    expect(await invoker.invoke('no_definition', {}, options)).toMatchObject({
      ok: false,
      error: { class: 'Crashed', message: expect.stringContaining('export default defineExecutor') },
    });
  });

  it('reports an exit and a throw as Crashed, with the cause', async () => {
    expect(await invoker.invoke('exits', {}, options)).toMatchObject({
      ok: false,
      error: { class: 'Crashed', message: expect.stringContaining('code 3') },
    });
    expect(await invoker.invoke('throws', {}, options)).toMatchObject({
      ok: false,
      error: { class: 'Crashed', message: expect.stringContaining('boom at line one') },
    });
  });

  it('stops an executor at its output cap with OutputTooLarge', async () => {
    expect(await invoker.invoke('too_large', {}, options)).toMatchObject({
      ok: false,
      error: { class: 'OutputTooLarge', message: expect.stringContaining('1024 bytes') },
    });
  });

  it('kills an executor that runs past max_duration_ms, with every process it started', async () => {
    const pidFile = join(await temp.make('pid-'), 'pid');
    const result = await invoker.invoke('sleeper', { pidFile }, options);
    expect(result).toMatchObject({
      ok: false,
      error: { class: 'Timeout', message: expect.stringContaining('5000 ms') },
    });
    const pid = Number(await readFile(pidFile, 'utf8'));
    expect(pid).toBeGreaterThan(0);
    // Gone, or at most a zombie waiting for init to reap it: it no longer runs.
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
    if (stat !== undefined)
      expect(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)).toBe('Z');
  });

  it('returns Timeout even when a process that left the group still holds its output pipes', {
    timeout: 20_000,
  }, async () => {
    const pidFile = join(await temp.make('pid-'), 'pid');
    try {
      const result = await invoker.invoke('sleeper', { pidFile, detached: true }, options);
      expect(result).toMatchObject({ ok: false, error: { class: 'Timeout' } });
    } finally {
      // At tier none nothing contains a process that started its own session: clean up after it.
      const pid = Number(await readFile(pidFile, 'utf8').catch(() => '0'));
      if (pid > 0) process.kill(pid, 'SIGKILL');
    }
  });

  it('stops before starting when the caller already gave up', async () => {
    const pidFile = join(await temp.make('pid-'), 'pid');
    const controller = new AbortController();
    controller.abort();
    const result = await invoker.invoke('sleeper', { pidFile }, { ...options, signal: controller.signal });
    expect(result).toMatchObject({
      ok: false,
      error: { class: 'Timeout', message: expect.stringContaining('aborted') },
    });
    expect(existsSync(pidFile)).toBe(false);
  });

  for (const [name, specifier] of [
    ['imports_package', 'fs-extra'],
    ['imports_relative', './helper.ts'],
    ['requires_package', 'fs-extra'],
    ['imports_dynamic', 'fs-extra'],
  ] as const) {
    it(`refuses the code's import of ${specifier} (${name}) as Crashed, saying why`, async () => {
      expect(await invoker.invoke(name, {}, options)).toMatchObject({
        ok: false,
        error: {
          class: 'Crashed',
          message: expect.stringContaining(
            `import of "${specifier}" refused: executors may import only node: built-ins`,
          ),
        },
      });
    });
  }

  it('lets the code import Node built-ins, with or without the node: prefix, including prefix-only ones', async () => {
    expect(await invoker.invoke('uses_builtins', {}, options)).toMatchObject({
      ok: true,
      content: { two: 2, sep: '/', hash: 64 },
    });
  });

  it('answers an unknown executor or version with NotInvocable', async () => {
    expect(await invoker.invoke('nobody', {}, options)).toMatchObject({
      ok: false,
      error: { class: 'NotInvocable' },
    });
    expect(await invoker.invoke('greet', { name: 'Ada' }, { ...options, version: '9.0.0' })).toMatchObject({
      ok: false,
      error: { class: 'NotInvocable', message: expect.stringContaining('9.0.0') },
    });
  });

  it('answers with data, not an exception, when the host cannot compile the schema', async () => {
    const result = await invoker.invoke('newer_draft', {}, options);
    expect(result).toMatchObject({
      ok: false,
      error: { class: 'NotInvocable', message: expect.stringContaining('schema.json') },
    });
  });
});

describe('the plain process runner', () => {
  it('refuses an executor that asks for a stronger isolation tier, without starting it', async () => {
    expect(await invoker.invoke('wants_sandbox', {}, options)).toEqual({
      ok: false,
      error: {
        class: 'IsolationUnavailable',
        message: expect.stringContaining('requires isolation tier "standard"'),
      },
      isolation: { tier: 'none', layers: [] },
    });
  });

  it('validates the input again in the child, before the code file is loaded', async () => {
    const marker = join(markers, 'greet');
    const before = existsSync(marker) ? await readFile(marker, 'utf8') : '';
    const report = await createProcessRunner().run({
      executor: catalog.get('greet')!,
      args: { name: 7 },
      context: { traceId: 'direct', workspace, caller: { kind: 'test' } },
    });
    expect(report).toMatchObject({
      result: { ok: false, error: { class: 'InvalidInput', message: '/name: expected string, got integer' } },
      exit: 'error',
    });
    expect(existsSync(marker) ? await readFile(marker, 'utf8') : '').toBe(before);
  });

  it('runs it anyway when enforceMinimumTier is off, and says so in the isolation record', async () => {
    const lenient = createInvoker({ catalog, runner: createProcessRunner({ enforceMinimumTier: false }) });
    expect(await lenient.invoke('wants_sandbox', { a: 1 }, options)).toEqual({
      ok: true,
      content: { echo: { a: 1 } },
      isolation: { tier: 'none', layers: ['process'], belowDeclared: true },
    });
  });
});

describe('the audit log', () => {
  it('refuses to run a call whose audit line cannot be written (fail closed)', async () => {
    const broken = await temp.make('broken-audit-');
    await writeFile(join(broken, '.audit'), 'a file where the audit folder should be');
    const stubborn = createInvoker({
      catalog,
      runner: createProcessRunner(),
      audit: createAuditLog({ workspace: broken }),
    });
    const before = existsSync(join(markers, 'greet')) ? await readFile(join(markers, 'greet'), 'utf8') : '';
    const result = await stubborn.invoke(
      'greet',
      { name: 'Ada', count: 1 },
      { ...options, workspace: broken },
    );
    expect(result).toMatchObject({ ok: false, error: { class: 'AuditUnavailable' } });
    expect(!result.ok && result.error.message).toMatch(/is not a folder/);
    const after = existsSync(join(markers, 'greet')) ? await readFile(join(markers, 'greet'), 'utf8') : '';
    expect(after).toBe(before); // the executor never loaded
  });

  it('writes one line per call with the documented fields', async () => {
    const long = 'é'.repeat(500);
    const args = { name: 'Ada', count: 3 };
    const result = await invoker.invoke('greet', args, {
      ...options,
      traceId: 'trace-audit',
      turnId: 'turn-audit',
    });
    expect(result.ok).toBe(true);
    const line = (await auditLines()).find((entry) => entry.trace_id === 'trace-audit')!;
    const stdout = JSON.stringify({ ok: true, content: { greeting: 'Hello, Ada!', count: 3 } });
    expect(line).toEqual({
      ts: '2026-04-25T08:14:33.881Z',
      trace_id: 'trace-audit',
      turn_id: 'turn-audit',
      executor: 'greet',
      version: '1.0.0',
      caller: { kind: 'user', sender: 'ada', channel: 'cli' },
      input: { name: 'Ada', count: 3 },
      output: { size: Buffer.byteLength(stdout), sha: await blake3Digest(stdout) },
      duration_ms: expect.any(Number),
      exit: 'ok',
      isolation: 'none',
    });
    expect(line.duration_ms).toBeGreaterThanOrEqual(0);

    // A refusal is audited too, with its input cut down to size.
    await invoker.invoke(
      'greet',
      { name: long, nested: { a: { b: { c: { d: 'deep' } } } } },
      { ...options, traceId: 'trace-refused' },
    );
    const refused = (await auditLines()).find((entry) => entry.trace_id === 'trace-refused')!;
    expect(refused).toMatchObject({
      executor: 'greet',
      exit: 'policy',
      error_class: 'InvalidInput',
      output: { size: 0, sha: null },
    });
    // Every documented field is on every line, null when there is nothing to say.
    expect(refused.turn_id).toBeNull();
    await invoker.invoke('nobody', {}, { ...options, traceId: 'trace-unknown' });
    const unknown = (await auditLines()).find((entry) => entry.trace_id === 'trace-unknown')!;
    const documented = [
      'ts',
      'trace_id',
      'turn_id',
      'executor',
      'version',
      'caller',
      'input',
      'output',
      'duration_ms',
      'exit',
    ];
    expect(Object.keys(unknown).sort()).toEqual([...documented, 'error_class'].sort());
    expect(unknown).toMatchObject({
      version: null,
      turn_id: null,
      output: { size: 0, sha: null },
      exit: 'policy',
    });
    expect(refused.input.name).toBe(`${'é'.repeat(200)}…(500 chars)`);
    expect(refused.input.nested).toEqual({ a: { b: '[object]' } });
  });

  it('audits every outcome with its exit kind', async () => {
    const outcomes: Array<[string, unknown, string, string | undefined]> = [
      ['fails_declared', {}, 'error', 'NotFound'],
      ['throws', {}, 'crash', 'Crashed'],
      ['not_json', {}, 'crash', 'NonJsonOutput'],
      ['bad_output', { name: 'x' }, 'error', 'InvalidOutput'],
      ['nobody', {}, 'policy', 'NotInvocable'],
      ['wants_sandbox', {}, 'policy', 'IsolationUnavailable'],
    ];
    for (const [name, args] of outcomes) {
      await invoker.invoke(name, args, { ...options, traceId: `trace-${name}` });
    }
    const lines = await auditLines();
    for (const [name, , exit, errorClass] of outcomes) {
      const line = lines.find((entry) => entry.trace_id === `trace-${name}`);
      expect([name, line?.exit, line?.error_class]).toEqual([name, exit, errorClass]);
    }
  });

  it('keeps the file private and appends across log instances', async () => {
    const own = await temp.make('audit-');
    const entry = (trace: string): AuditEntry => ({
      ts: '2026-01-02T23:59:59.000Z',
      trace_id: trace,
      turn_id: null,
      executor: 'x',
      version: '1.0.0',
      caller: { kind: 'cli' },
      input: {},
      output: { size: 0, sha: null },
      duration_ms: 0,
      exit: 'ok',
    });
    await createAuditLog({ workspace: own }).append(entry('one'));
    await createAuditLog({ workspace: own }).append(entry('two'));
    const file = join(own, '.audit', 'executors', '2026-01-02.jsonl');
    expect(
      (await readFile(file, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).trace_id),
    ).toEqual(['one', 'two']);
    const { stat } = await import('node:fs/promises');
    expect((await stat(file)).mode & 0o077).toBe(0);
  });

  it('summarises inputs: long strings cut with their length, deep values and long lists bounded', () => {
    expect(summarizeInput('plain')).toEqual({ value: 'plain' });
    expect(summarizeInput({ text: 'a'.repeat(201) })).toEqual({ text: `${'a'.repeat(200)}…(201 chars)` });
    expect(summarizeInput({ text: 'a'.repeat(200) })).toEqual({ text: 'a'.repeat(200) });
    expect(summarizeInput({ list: Array.from({ length: 40 }, (_, index) => index) }).list).toHaveLength(16);
    expect(
      Object.keys(
        summarizeInput(Object.fromEntries(Array.from({ length: 50 }, (_, index) => [`k${index}`, index]))),
      ),
    ).toHaveLength(32);
    expect(summarizeInput({ a: [[['deep']]] })).toEqual({ a: [['[array of 1]']] });
  });
});
