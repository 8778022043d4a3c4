// The nightly suggestions and the person's decisions, over a real mnestome, a real catalog of
// seed copies signed with the release key, and (for generation) the real sandbox.
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createCatalog,
  createKeyStore,
  type PublicKey,
  readPublicKey,
  signExecutor,
} from '@metnos/executor-sdk';
import { createMnestome, type DesiredSignature } from '@metnos/mnestome';
import { createSandboxRunner } from '@metnos/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderManifest } from './generate/artefacts.ts';
import { createSynt } from './synt.ts';
import { createSyntStore } from './synt-store.ts';
import { CSV_SUM_CODE, CSV_SUM_SPEC, createScriptedWise, skeletonAnswer } from './test/index.ts';

const REPO = join(import.meta.dirname, '..', '..', '..');
const NO_SANDBOX = existsSync('/usr/bin/bwrap') ? undefined : 'bubblewrap (/usr/bin/bwrap) is not installed';

const CSV_SUM: DesiredSignature = {
  name: 'csv_sum',
  args: ['column', 'text'],
  piped: [{ arg: 'text', from: 'fs_read', field: 'content' }],
  sourceOutput: ['content', 'path'],
  purpose: ['sum', 'amount', 'column', 'expenses'],
};
const COUNT_WORDS: DesiredSignature = {
  name: 'read_files_count_words',
  args: ['entries'],
  piped: [{ arg: 'entries', from: 'fs_list', field: 'entries' }],
  sourceOutput: ['path', 'entries', 'count', 'truncated', 'unreadable'],
  purpose: ['count', 'words', 'notes'],
};

let root: string;
let now = new Date('2026-05-01T08:00:00Z');
const clock = () => now;
let trustedKeys: PublicKey[];

async function world() {
  const here = await mkdtemp(join(root, 'world-'));
  const executors = join(here, 'executors');
  for (const seed of ['fs_read', 'fs_list', 'text_stats'])
    await cp(join(REPO, 'executors', seed), join(executors, seed), { recursive: true });
  const catalog = createCatalog({ root: executors, trustedKeys, stateDir: join(here, 'state') });
  await catalog.load();
  const mnestome = createMnestome({ path: join(here, 'mnestome.sqlite'), clock });
  const store = createSyntStore({ path: join(here, 'synt.sqlite'), clock });
  return { here, executors, catalog, mnestome, store };
}

/** The synt over a world, with the person's key store and the real sandbox. */
function syntOf(
  parts: Awaited<ReturnType<typeof world>>,
  model: ReturnType<typeof createScriptedWise>,
  extra: Partial<Parameters<typeof createSynt>[0]> = {},
) {
  return createSynt({
    store: parts.store,
    catalog: parts.catalog,
    mnestome: parts.mnestome,
    model,
    runner: createSandboxRunner(),
    keyStore: createKeyStore({ configDir: join(root, 'config') }),
    trustedKeys,
    clock,
    ...extra,
  });
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'metnos-synt-'));
  const person = await createKeyStore({ configDir: join(root, 'config') }).create('default');
  trustedKeys = [await readPublicKey(join(REPO, 'keys', 'metnos-release.pub')), person];
});

afterAll(() => rm(root, { recursive: true, force: true }));

describe('synt_suggest, compose-only over recurring proto-mnests', () => {
  it('files a generate card for a closed road, a compose card for a chain, and nothing below the thresholds', async () => {
    const parts = await world();
    const { catalog, mnestome, store } = parts;
    const synt = syntOf(parts, createScriptedWise([]), {
      ids: (() => {
        let next = 0;
        return () => String(++next).padStart(8, '0');
      })(),
    });
    for (let day = 1; day <= 3; day++) {
      now = new Date(`2026-05-0${day}T08:00:00Z`);
      mnestome.recordPassing('fs_read', 'csv_sum', false, CSV_SUM);
      mnestome.recordPassing('fs_list', 'read_files_count_words', false, COUNT_WORDS);
      if (day < 3) mnestome.recordPassing('fs_read', 'fax_send', false, { ...CSV_SUM, name: 'fax_send' });
    }
    now = new Date('2026-05-04T04:30:00Z');
    const report = await synt.suggest();
    expect(report.recurring).toBe(2);
    expect(report.summary).toBe('2 recurring proto-mnests; filed 1 generate, 1 compose');
    const cards = synt.list();
    expect(cards.map((card) => [card.kind, card.state])).toEqual(
      expect.arrayContaining([
        ['generate', 'open'],
        ['compose', 'open'],
      ]),
    );
    const compose = cards.find((card) => card.kind === 'compose')!;
    expect(compose.title).toBe('read_files_count_words can be done with fs_list → fs_read → text_stats');
    expect(cards.find((card) => card.kind === 'generate')!.title).toContain(
      'generate csv_sum: wished for 3 times',
    );

    // a second night refreshes what is open and files nothing twice; a rejected card stays rejected
    synt.reject(compose.id, 'ada');
    now = new Date('2026-05-05T04:30:00Z');
    const again = await synt.suggest();
    expect(again.filed).toEqual([]);
    expect(again.refreshed).toBe(2);
    expect(synt.show(compose.id).proposal.state).toBe('rejected');
    expect(() => synt.reject(compose.id, 'ada')).toThrow(/nothing to reject/);
    await expect(synt.approve('p-none', { by: 'ada' })).rejects.toMatchObject({ code: 'not_found' });

    // a card whose run was cut short by a stopped process is not stuck: it waits for a fix
    const generate = cards.find((card) => card.kind === 'generate')!;
    expect(store.claimProposal(generate.id, ['open'], 'running', { runId: 'r-cut' })).toBe(true);
    store.createRun({ id: 'r-cut', proposalId: generate.id, draft: { motivation: generate as never } });
    expect(synt.show(generate.id).proposal.state).toBe('running');
    now = new Date(now.getTime() + 31 * 60 * 1000);
    expect(synt.show(generate.id)).toMatchObject({
      proposal: { state: 'waiting' },
      run: {
        state: 'waiting',
        waitingFor: 'fix',
        reason: expect.stringContaining('the run was interrupted at pattern'),
      },
    });
    expect(synt.reject(generate.id, 'ada').proposal.state).toBe('rejected');

    // a month without asking: the pattern faded, and no new card comes
    now = new Date('2026-06-20T04:30:00Z');
    expect((await synt.suggest()).recurring).toBe(0);
    mnestome.close();
    store.close();
  });
});

describe.skipIf(NO_SANDBOX)(
  `approving a generate card${NO_SANDBOX ? ` (skipped: ${NO_SANDBOX})` : ''}`,
  () => {
    it('walks the stages to each question, shows the review as diffs, and installs only on the approved digest', async () => {
      const parts = await world();
      const { executors, catalog, mnestome, store } = parts;
      const wise = createScriptedWise([
        JSON.stringify(CSV_SUM_SPEC),
        skeletonAnswer(CSV_SUM_SPEC, CSV_SUM_CODE),
      ]);
      const synt = syntOf(parts, wise, {
        refusedKeyIds: [trustedKeys[0]!.keyId],
      });
      for (let day = 1; day <= 3; day++) {
        now = new Date(`2026-05-0${day}T08:00:00Z`);
        mnestome.recordPassing('fs_read', 'csv_sum', false, CSV_SUM);
      }
      now = new Date('2026-05-04T04:30:00Z');
      await synt.suggest();
      const [card] = synt.list({ states: ['open'] });

      let shown = await synt.approve(card!.id, { by: 'ada' });
      expect(shown.proposal).toMatchObject({ state: 'waiting' });
      expect(shown.run).toMatchObject({ waitingFor: 'spec', spec: { name: 'csv_sum' } });
      expect(shown.proposal.note).toContain('waiting for your word on the spec');

      shown = await synt.approve(card!.id, { by: 'ada' });
      expect(shown.run).toMatchObject({ waitingFor: 'approval', stage: 'approval' });
      const review = shown.review!;
      expect(review.files.map((file) => file.path)).toEqual([
        'manifest.toml',
        'main.ts',
        'schema.json',
        'tests/cases.json',
      ]);
      expect(review.files[1]!.diff).toMatch(
        /^--- \/dev\/null\n\+\+\+ b\/csv_sum\/main.ts\n@@ -0,0 \+1,\d+ @@\n\+import/,
      );
      expect(review.profile.chosen).toEqual({ read: [], write: [], domains: [] });
      expect(shown.modelCalls.map((call) => call.stage)).toEqual(['specification', 'skeleton']);

      // without the digest shown, nothing is decided
      shown = await synt.approve(shown.run!.id, { by: 'ada' });
      expect(shown.run).toMatchObject({ waitingFor: 'approval' });
      expect(existsSync(join(executors, 'csv_sum'))).toBe(false);

      shown = await synt.approve(card!.id, { by: 'ada', digest: review.digest });
      expect(shown.proposal.state).toBe('done');
      expect(shown.proposal.note).toMatch(/^installed csv_sum@1.0.0 \(active\), signed with ed25519:/);
      expect(catalog.get('csv_sum')?.manifest.executor.created_by).toBe(`synt:${shown.run!.id}`);
      await expect(synt.approve(card!.id, { by: 'ada' })).rejects.toMatchObject({ code: 'conflict' });

      // the proto-mnest is served now: the next night files nothing for it
      expect((await synt.suggest()).filed).toEqual([]);
      mnestome.close();
      store.close();
    });
  },
);

/** An executor of the person's, as an earlier synt run would have left it: signed with their key. */
async function ownExecutor(executors: string, name: string): Promise<void> {
  const dir = join(executors, name);
  await mkdir(dir, { recursive: true });
  const spec = { ...CSV_SUM_SPEC, name };
  await writeFile(
    join(dir, 'manifest.toml'),
    renderManifest(
      spec,
      { read: [], write: [], domains: [] },
      { runId: 'r-old', createdAt: new Date('2026-04-01T00:00:00Z') },
    ),
  );
  await writeFile(join(dir, 'main.ts'), CSV_SUM_CODE);
  await writeFile(
    join(dir, 'schema.json'),
    JSON.stringify({ definitions: { Input: spec.input, Output: spec.output } }),
  );
  await signExecutor(dir, await createKeyStore({ configDir: join(root, 'config') }).load('default'));
}

describe.skipIf(NO_SANDBOX)(`a merge${NO_SANDBOX ? ` (skipped: ${NO_SANDBOX})` : ''}`, () => {
  it('two executors with overlapping traces are merged into one; they go fused, and archived once their mnests fade', async () => {
    const parts = await world();
    const { executors, catalog, mnestome, store } = parts;
    await ownExecutor(executors, 'csv_sum');
    await ownExecutor(executors, 'csv_total');
    await catalog.load();
    now = new Date('2026-05-01T08:00:00Z');
    for (const name of ['csv_sum', 'csv_total']) {
      mnestome.recordPassing('fs_read', name, true);
      mnestome.recordPassing(name, 'text_stats', true);
    }
    const merged = {
      ...CSV_SUM_SPEC,
      name: 'csv_aggregate',
      summary: 'Sum or total one column of CSV text.',
    };
    const wise = createScriptedWise([JSON.stringify(merged), skeletonAnswer(merged, CSV_SUM_CODE)]);
    const synt = syntOf(parts, wise);
    const report = await synt.suggest();
    expect(report.summary).toBe('0 recurring proto-mnests; filed 1 merge');
    const [card] = synt.list();
    expect(card).toMatchObject({ kind: 'merge', title: 'merge csv_sum and csv_total into one executor' });

    await synt.approve(card!.id, { by: 'ada' });
    expect(wise.requests[0]!.user).toContain('Specify ONE executor that covers both');
    const shown = await synt.approve(card!.id, { by: 'ada' });
    expect(shown.review!.files[1]!.diff).toContain('--- a/csv_sum/main.ts');
    const done = await synt.approve(card!.id, { by: 'ada', digest: shown.review!.digest });
    expect(done.proposal.state).toBe('done');
    const states = () => Object.fromEntries(catalog.list().map((row) => [row.name, row.state]));
    expect(states()).toMatchObject({ csv_aggregate: 'active', csv_sum: 'fused', csv_total: 'fused' });

    // while their mnests are alive, nothing more; once they faded, the ager and the synt propose archival
    expect((await synt.suggest()).filed).toEqual([]);
    now = new Date('2026-12-01T04:00:00Z');
    mnestome.age(now);
    const night = await synt.suggest();
    expect(night.summary).toBe('0 recurring proto-mnests; filed 2 archive');
    for (const archive of synt.list({ states: ['open'] })) await synt.approve(archive.id, { by: 'ada' });
    expect(states()).toMatchObject({ csv_aggregate: 'active', csv_sum: 'archived', csv_total: 'archived' });
    mnestome.close();
    store.close();
  });
});
