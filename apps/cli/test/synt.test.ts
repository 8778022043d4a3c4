// The synt end to end, through the CLI in-process: a loopback model speaking the Ollama protocol
// (the fast tier plans, the wise tier writes the executor), a workspace of its own with a copy of
// fs_read, the person's key from `metnos keys init`, real SQLite stores, and every executor run —
// the generated one's birth tests included — in the real sandbox.
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOllamaServer } from '@metnos/planner/test';
import { CSV_SUM_CODE, CSV_SUM_SPEC, skeletonAnswer } from '@metnos/synt/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, repoRoot } from './__fixtures__/cli.ts';

const NO_SANDBOX = existsSync('/usr/bin/bwrap') ? undefined : 'bubblewrap (/usr/bin/bwrap) is not installed';

const REQUEST = 'sum the amount column of data/expenses.csv';
const intent = { text: '{"verb":"compute","object":"file","qualifiers":["sum","amount"]}' };
/** The plan the fast tier proposes: read the file, pipe its text into csv_sum. */
const plan = {
  text: JSON.stringify({
    steps: [
      { tool: 'fs_read', args: { path: 'data/expenses.csv' } },
      { tool: 'csv_sum', args: { text: '${step1.content.content}', column: 'amount' } },
    ],
    final_message: 'The amount column sums to ${step2.content.sum}.',
  }),
};

let work: string;
let server: Awaited<ReturnType<typeof startOllamaServer>>;
const savedEnv = { ...process.env };

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-synt-e2e-'));
  server = await startOllamaServer();
  await cp(join(repoRoot, 'executors', 'fs_read'), join(work, 'executors', 'fs_read'), { recursive: true });
  await mkdir(join(work, 'workspace', 'data'), { recursive: true });
  await writeFile(
    join(work, 'workspace', 'data', 'expenses.csv'),
    'date,amount\n2026-05-01,12.50\n2026-05-02,7.50\n2026-05-03,30\n',
  );
  // two wishes in a month make a pattern here (the defaults ask three, weight 0.30)
  await writeFile(
    join(work, 'metnos.toml'),
    `[workspace]
root = "workspace"
executors = "executors"
trusted_keys = ["${join(repoRoot, 'keys', 'metnos-release.pub')}"]

[runtime]
data_dir = "data"

[runtime.llm.fast]
provider = "ollama"
model = "qwen3:8b"
base_url = "${server.url}"
think = false

[runtime.llm.wise]
provider = "ollama"
model = "qwen3:32b"
base_url = "${server.url}"

[synt]
min_uses = 2
min_weight = 0.25
`,
  );
  process.env.INIT_CWD = work;
  delete process.env.npm_lifecycle_event; // under npx the CLI would read its own cwd, not INIT_CWD
  process.env.METNOS_CONFIG_DIR = join(work, 'config');
  expect((await cli(['keys', 'init'])).code).toBe(0);
});

afterAll(async () => {
  process.env = savedEnv;
  await server.close();
  await rm(work, { recursive: true, force: true });
});

const idOf = (out: string, prefix: 'p' | 'r') =>
  new RegExp(`\\b(${prefix}-[0-9a-f]{8})\\b`).exec(out)?.[1] ?? '';
const installed = async () =>
  (await readdir(join(work, 'executors'))).filter((name) => !name.startsWith('.')).sort();

describe.skipIf(NO_SANDBOX)(`metnos synt${NO_SANDBOX ? ` (skipped: ${NO_SANDBOX})` : ''}`, () => {
  it('a missing executor wished for twice is proposed, generated, approved, signed with your key, and serves the next requests', async () => {
    // two requests need csv_sum, which does not exist: each ends at the terminator, each leaves a proto-mnest
    for (const _ of [1, 2]) {
      server.push(intent, plan, plan);
      const asked = await cli(['ask', REQUEST]);
      expect(asked.code).toBe(1);
      expect(asked.err).toContain('csv_sum does not exist');
    }

    // the nightly task, now: compose finds no chain, so a card proposes to generate it
    const suggested = await cli(['synt', 'suggest']);
    expect(suggested.out).toContain('synt_suggest: 1 recurring proto-mnest; filed 1 generate');
    const card = idOf(suggested.out, 'p');
    const listed = await cli(['synt', 'list']);
    expect(listed.out).toMatch(
      new RegExp(`${card}\\s+generate\\s+open\\s+generate csv_sum: wished for 2 times after fs_read`),
    );

    // approving starts the stages: the wise tier drafts the spec, which waits for the person
    const before = server.requests.length;
    server.push({ text: JSON.stringify(CSV_SUM_SPEC) }, { text: skeletonAnswer(CSV_SUM_SPEC, CSV_SUM_CODE) });
    const started = await cli(['synt', 'approve', card]);
    expect(started.out).toContain('waiting for your word on the spec');
    expect(started.out).toContain('"name": "csv_sum"');
    expect(server.requests.at(-1)?.body).toMatchObject({ model: 'qwen3:32b' });

    // the spec approved: code, profile and birth tests in the sandbox, then the artefacts wait for approval
    const reviewed = await cli(['synt', 'approve', card]);
    expect(reviewed.out).toContain('waiting for your approval');
    expect(reviewed.out).toContain('+++ b/csv_sum/main.ts');
    expect(reviewed.out).toContain(
      "+import { defineExecutor, fail, ok } from '@metnos/executor-sdk/define';",
    );
    expect(reviewed.out).toMatch(/profile:\n--- proposed profile/);
    expect(server.requests.length - before).toBe(2);
    const digest = /--digest (sha256:[0-9a-f]{64})/.exec(reviewed.out)?.[1];
    expect(digest).toBeDefined();
    expect(await installed()).toEqual(['fs_read']);

    // show: each stage and the lineage of both wise calls
    const shown = await cli(['synt', 'show', card]);
    expect(shown.out).toMatch(/profile\s+done\s+tightest profile: no files, no network/);
    expect(shown.out).toMatch(
      /specification\s+ollama\/qwen3:32b \(wise\)\s+prompt [0-9a-f]{12}\s+answer \d+ chars/,
    );
    expect(shown.out).toMatch(/skeleton\s+ollama\/qwen3:32b \(wise\)/);

    // approving without the digest shown decides nothing; with it, csv_sum is signed with your key
    const blind = await cli(['synt', 'approve', card]);
    expect(blind.out).toContain('the approval named no review digest');
    expect(await installed()).toEqual(['fs_read']);
    const approved = await cli(['synt', 'approve', card, '--digest', digest!]);
    expect(approved.out).toMatch(/installed csv_sum@1\.0\.0 \(active\), signed with ed25519:[0-9a-f]{16}/);
    const run = idOf(approved.out, 'r');
    const verified = await cli(['executor', 'verify', 'csv_sum']);
    expect(verified.out).toMatch(/^ok {2}csv_sum@1\.0\.0 {2}signed by ed25519:/);
    const keys = await cli(['keys', 'list']);
    expect(keys.out).toContain(/signed by (ed25519:[0-9a-f]{16})/.exec(verified.out)![1]!);
    const executors = await cli(['executor', 'list']);
    expect(executors.out).toMatch(/csv_sum\s+1\.0\.0\s+active/);
    expect((await cli(['synt', 'show', run])).out).toContain(`${card}  generate  done`);

    // the third request is planned with it; the fourth is served from memory
    server.push(intent, plan);
    const third = await cli(['ask', REQUEST]);
    expect(third.out).toContain('The amount column sums to 50.');
    expect(third.out).toContain('— layer: engine');
    const fourth = await cli(['ask', REQUEST]);
    expect(fourth.out).toContain('The amount column sums to 50.');
    expect(fourth.out).toContain('— layer: fastpath · 0 model calls');
    expect(server.remaining()).toBe(0);

    // the proto-mnest is served: the next night proposes nothing more
    expect((await cli(['synt', 'suggest'])).out).toContain('no new card');
  });

  it('a rejected proposal signs nothing and is not proposed again', async () => {
    const other = {
      text: JSON.stringify({
        steps: [
          { tool: 'fs_read', args: { path: 'data/expenses.csv' } },
          { tool: 'csv_chart', args: { text: '${step1.content.content}', column: 'amount' } },
        ],
        final_message: '${step2.content.chart}',
      }),
    };
    for (const _ of [1, 2]) {
      server.push(intent, other, other);
      await cli(['ask', 'chart the amount column of data/expenses.csv']);
    }
    const card = idOf((await cli(['synt', 'suggest'])).out, 'p');
    server.push({ text: JSON.stringify({ ...CSV_SUM_SPEC, name: 'csv_chart' }) });
    expect((await cli(['synt', 'approve', card])).out).toContain('waiting for your word on the spec');
    const rejected = await cli(['synt', 'reject', card]);
    expect(rejected.out).toContain(`${card}  generate  rejected`);
    expect(rejected.out).toMatch(/specification\s+rejected\s+rejected by user/);
    expect(await installed()).toEqual(['csv_sum', 'fs_read']);
    expect((await cli(['synt', 'suggest'])).out).toContain('no new card');
    expect((await cli(['synt', 'list'])).out).not.toContain(card);
    expect((await cli(['synt', 'list', '--all'])).out).toContain(card);
  });

  it('refuses an unknown id, a bad spec file and a missing argument without a stack trace', async () => {
    const unknown = await cli(['synt', 'show', 'p-00000000']);
    expect(unknown).toMatchObject({ code: 1, out: '' });
    expect(unknown.err).toContain('no proposal or run p-00000000');
    await writeFile(join(work, 'bad-spec.json'), '{"name": "Not A Name"}');
    const bad = await cli(['synt', 'approve', 'p-00000000', '--spec', 'bad-spec.json']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('bad-spec.json: field "name"');
    expect((await cli(['synt', 'approve'])).code).toBe(2);
    expect((await cli(['synt', 'sideways'])).err).toContain('unknown synt command "sideways"');
    for (const result of [unknown, bad]) expect(result.err).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
  });
});
