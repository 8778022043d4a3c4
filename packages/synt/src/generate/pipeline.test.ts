// The seven stages end to end, with a scripted wise tier and the REAL sandbox: the birth tests of
// every draft run in bubblewrap + Landlock + seccomp, the executor is signed with the person's key
// from a key store in a temp config dir, and it lands in a real catalog.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createAuditLog,
  createCatalog,
  createInvoker,
  createKeyStore,
  type PublicKey,
  verifyExecutor,
} from '@metnos/executor-sdk';
import { createSandboxRunner } from '@metnos/sandbox';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSyntStore, type SyntStore } from '../synt-store.ts';
import {
  CSV_FILE_SUM_SPEC,
  CSV_SUM_CODE,
  CSV_SUM_SPEC,
  createScriptedWise,
  OVERREACHING_CODE,
  skeletonAnswer,
} from '../test/index.ts';
import { installStage } from './install.ts';
import { createGenerator } from './pipeline.ts';
import type { GeneratorSettings, Motivation } from './types.ts';

/** The sandbox these tests are about; without bubblewrap they cannot say anything. */
const NO_SANDBOX = existsSync('/usr/bin/bwrap') ? undefined : 'bubblewrap (/usr/bin/bwrap) is not installed';

const MOTIVATION: Motivation = {
  kind: 'proto',
  src: 'fs_read',
  dst: 'csv_sum',
  uses: 3,
  weight: 0.39,
  lastUsedAt: '2026-05-03T08:00:00.000Z',
  desired: {
    name: 'csv_sum',
    args: ['column', 'text'],
    piped: [{ arg: 'text', from: 'fs_read', field: 'content.content' }],
    sourceOutput: ['content', 'path'],
    purpose: ['sum', 'amount', 'column', 'expenses'],
  },
};

let root: string;
let executorsDir: string;
let store: SyntStore;
let catalog: ReturnType<typeof createCatalog>;
let trustedKeys: PublicKey[];
let keyLoads: string[];
const runner = createSandboxRunner();
const keyStore = () => {
  const real = createKeyStore({ configDir: join(root, 'config') });
  return {
    load: (name: string) => {
      keyLoads.push(name);
      return real.load(name);
    },
  };
};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'metnos-synt-pipeline-'));
  const person = await createKeyStore({ configDir: join(root, 'config') }).create('default');
  trustedKeys = [{ keyId: person.keyId, publicKey: person.publicKey }];
});

afterAll(() => rm(root, { recursive: true, force: true }));

beforeEach(async () => {
  const here = await mkdtemp(join(root, 'case-'));
  executorsDir = join(here, 'executors');
  catalog = createCatalog({ root: executorsDir, trustedKeys, stateDir: join(here, 'state') });
  await catalog.load();
  store = createSyntStore({ path: join(here, 'synt.sqlite') });
  keyLoads = [];
});

function generator(answers: string[], extra: Partial<GeneratorSettings> = {}) {
  const model = createScriptedWise(answers, { id: 'wise-test-model' });
  return {
    model,
    generator: createGenerator({
      store,
      model,
      catalog,
      runner,
      keyStore: keyStore(),
      trustedKeys,
      ...extra,
    }),
  };
}

const written = async () =>
  (await readdir(executorsDir).catch(() => [])).filter((name) => !name.startsWith('.'));

describe.skipIf(NO_SANDBOX)(`the seven stages${NO_SANDBOX ? ` (skipped: ${NO_SANDBOX})` : ''}`, () => {
  it('specifies, codes, profiles and tests a CSV column sum, waits for approval, then signs it with the person’s key and installs it active', async () => {
    const { model, generator: pipeline } = generator([
      JSON.stringify(CSV_SUM_SPEC),
      skeletonAnswer(CSV_SUM_SPEC, CSV_SUM_CODE),
    ]);
    let run = await pipeline.start('p-1', 'r-csv', MOTIVATION);
    expect(run).toMatchObject({ state: 'waiting', stage: 'specification', waitingFor: 'spec' });
    expect(run.draft.spec?.name).toBe('csv_sum');

    run = await pipeline.resume(run.id, { by: 'ada' });
    expect(run).toMatchObject({ state: 'waiting', stage: 'approval', waitingFor: 'approval' });
    // the tightest profile that passed in the sandbox: nothing at all
    expect(run.draft.grants).toEqual({ read: [], write: [], domains: [] });
    expect(run.draft.cases?.map((test) => test.name)).toContain(
      'an argument outside the contract is refused (synt)',
    );
    const digest = run.draft.review!.digest;
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await written()).toEqual([]);
    expect(keyLoads).toEqual([]);

    // an approval of other artefacts decides nothing
    run = await pipeline.resume(run.id, { by: 'ada', digest: `sha256:${'0'.repeat(64)}` });
    expect(run).toMatchObject({ state: 'waiting', waitingFor: 'approval' });
    expect(run.reason).toContain('not the artefacts shown');
    expect(await written()).toEqual([]);

    run = await pipeline.resume(run.id, { by: 'ada', digest });
    expect(run.state).toBe('installed');
    expect(keyLoads).toEqual(['default']);
    const dir = join(executorsDir, 'csv_sum');
    const verified = await verifyExecutor(dir, { trustedKeys });
    expect(verified.keyId).toBe(trustedKeys[0]!.keyId);
    expect(verified.manifest.executor.created_by).toBe('synt:r-csv');
    expect(verified.manifest.sandbox).toMatchObject({ min_tier: 'full', fs: { read: [], write: [] } });
    expect(JSON.parse(await readFile(join(dir, 'tests', 'cases.json'), 'utf8'))).toHaveLength(3);
    expect(catalog.list().find((row) => row.name === 'csv_sum')).toMatchObject({ state: 'active' });
    expect(run.draft.installed).toMatchObject({ name: 'csv_sum', version: '1.0.0', state: 'active' });

    // it serves a call through the sandbox like any executor
    const workspace = await mkdtemp(join(root, 'ws-'));
    const invoker = createInvoker({ catalog, runner, audit: createAuditLog({ workspace }) });
    const result = await invoker.invoke(
      'csv_sum',
      { text: 'date,amount\na,1.25\nb,2\n', column: 'amount' },
      { workspace, caller: { kind: 'test' } },
    );
    expect(result).toMatchObject({ ok: true, content: { sum: 3.25, rows: 2 } });

    // the run's record: every stage's outcome and each model call's lineage
    expect(store.stages(run.id).map((stage) => `${stage.stage}:${stage.outcome}`)).toEqual([
      'pattern:done',
      'specification:suspended',
      'specification:done',
      'skeleton:done',
      'profile:done',
      'birth:done',
      'approval:suspended',
      'approval:suspended',
      'approval:done',
      'install:done',
    ]);
    const calls = store.modelCalls(run.id);
    expect(calls.map((call) => call.stage)).toEqual(['specification', 'skeleton']);
    for (const call of calls) {
      expect(call).toMatchObject({ provider: 'scripted', model: 'wise-test-model', tier: 'wise' });
      expect(call.promptHash).toMatch(/^[0-9a-f]{64}$/);
      expect(call.answer?.length).toBeGreaterThan(100);
    }
    expect(model.requests[0]!.user).toContain('csv_sum');
    expect(model.remaining()).toBe(0);
  });

  it('an executor that reads outside the folder it was offered fails its birth tests in the sandbox, and the run suspends with the reason', async () => {
    const { generator: pipeline } = generator([
      JSON.stringify(CSV_FILE_SUM_SPEC),
      skeletonAnswer(CSV_FILE_SUM_SPEC, OVERREACHING_CODE),
    ]);
    let run = await pipeline.start('p-2', 'r-over', { ...MOTIVATION, dst: 'csv_file_sum' });
    run = await pipeline.resume(run.id, { by: 'ada' });
    expect(run).toMatchObject({ state: 'waiting', stage: 'profile', waitingFor: 'fix' });
    expect(run.reason).toContain('no profile up to the proposed one (read $WORKSPACE/data)');
    expect(run.reason).toContain('ledger/expenses.csv');
    expect(run.reason).toContain('needs more than it was offered');
    expect(run.draft.grants).toBeUndefined();
    expect(await written()).toEqual([]);
    expect(keyLoads).toEqual([]);
    const profile = store.stages(run.id).find((stage) => stage.stage === 'profile')!;
    expect((profile.detail as { tried: unknown[] }).tried).toHaveLength(2);
  });

  it('a run that is not approved signs nothing: rejected at the approval, or handed to the install stage without one', async () => {
    const { generator: pipeline } = generator([
      JSON.stringify(CSV_SUM_SPEC),
      skeletonAnswer(CSV_SUM_SPEC, CSV_SUM_CODE),
    ]);
    let run = await pipeline.start('p-3', 'r-no', MOTIVATION);
    run = await pipeline.resume(run.id, { by: 'ada' });
    expect(run.waitingFor).toBe('approval');

    // the install stage itself refuses a draft the person did not approve
    const unapproved = await installStage.run(run.draft, {
      runId: run.id,
      ask: async () => '',
      executors: () => catalog.executors(),
      settings: { model: createScriptedWise([]), catalog, runner, keyStore: keyStore(), trustedKeys },
    });
    expect(unapproved).toMatchObject({ kind: 'suspend', waitingFor: 'fix' });
    expect((unapproved as { reason: string }).reason).toContain(
      'nothing is signed without the person’s approval',
    );

    run = pipeline.reject(run.id, 'ada');
    expect(run.state).toBe('rejected');
    await expect(
      pipeline.resume(run.id, { by: 'ada', digest: run.draft.review!.digest }),
    ).rejects.toMatchObject({
      code: 'conflict',
    });
    expect(await written()).toEqual([]);
    expect(keyLoads).toEqual([]);
  });

  it('never signs with the release key, nor with a key the workspace does not trust', async () => {
    for (const [extra, expected] of [
      [{ keyName: 'metnos-release' }, 'the release key never signs a synthesised executor'],
      [{ trustedKeys: [] }, 'is not trusted by this workspace'],
    ] as const) {
      const { generator: pipeline } = generator(
        [JSON.stringify(CSV_SUM_SPEC), skeletonAnswer(CSV_SUM_SPEC, CSV_SUM_CODE)],
        extra,
      );
      const id = `r-key-${expected.length}`;
      let run = await pipeline.start('p-4', id, MOTIVATION);
      run = await pipeline.resume(id, { by: 'ada' });
      run = await pipeline.resume(id, { by: 'ada', digest: run.draft.review!.digest });
      expect(run).toMatchObject({ state: 'waiting', stage: 'install', waitingFor: 'fix' });
      expect(run.reason).toContain(expected);
      expect(await written()).toEqual([]);
    }
  });
});

describe('the dispatcher without the sandbox', () => {
  it('a refused draft goes back to the model once with the reason; a model that fails leaves the run waiting for a fix, and approving tries again', async () => {
    const { model, generator: pipeline } = generator(['{"name": "csv_sum"}', 'not json at all']);
    let run = await pipeline.start('p-5', 'r-bad', MOTIVATION);
    expect(run).toMatchObject({ state: 'waiting', stage: 'specification', waitingFor: 'fix' });
    expect(run.reason).toContain('refused twice');
    expect(model.requests[1]!.user).toContain('Your previous answer was refused: summary');
    // the script is spent: the next call throws, which the dispatcher turns into a wait
    run = await pipeline.resume(run.id, { by: 'ada' });
    expect(run).toMatchObject({ state: 'waiting', waitingFor: 'fix' });
    expect(run.reason).toContain('specification failed: the wise script is spent');
    expect(store.stages(run.id).at(-1)).toMatchObject({ stage: 'specification', outcome: 'failed' });
    expect(store.modelCalls(run.id).at(-1)?.error).toContain('spent');
  });

  it('an amended spec is checked like a drafted one, and an existing name is refused', async () => {
    const { generator: pipeline } = generator([JSON.stringify(CSV_SUM_SPEC)]);
    let run = await pipeline.start('p-6', 'r-edit', MOTIVATION);
    run = await pipeline.resume(run.id, {
      by: 'ada',
      spec: { ...CSV_SUM_SPEC, input: { ...CSV_SUM_SPEC.input, additionalProperties: true } },
    });
    expect(run).toMatchObject({ state: 'waiting', waitingFor: 'spec' });
    expect(run.reason).toContain('input: additionalProperties must be false');
  });
});
