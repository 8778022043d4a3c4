// The synt through the server: the nightly built-in at 04:30 (the mnestome's ager, then
// synt_suggest) files a card from a real mnestome, and the console's Proposals page, in Debian's
// Chromium, walks it — start, the spec approved, the artefacts shown as diffs and approved by their
// digest — while a scripted wise tier writes the executor and its birth tests run in the real
// sandbox. The executor ends signed with the person's key in the executors folder, active.
//
// Chromium missing is a failure with the reason (METNOS_SKIP_BROWSER=1 skips, and says so);
// bubblewrap missing skips, with the reason.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCatalog, createKeyStore, type PublicKey, verifyExecutor } from '@metnos/executor-sdk';
import { createMnestome, type DesiredSignature } from '@metnos/mnestome';
import { createSandboxRunner } from '@metnos/sandbox';
import { createSynt, createSyntStore } from '@metnos/synt';
import { CSV_SUM_CODE, CSV_SUM_SPEC, createScriptedWise, skeletonAnswer } from '@metnos/synt/test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEngine } from '../src/app.ts';
import { mnestomeAgerTask } from '../src/scheduler/mnestome-task.ts';
import { nightlySteps, syntSuggestTask } from '../src/scheduler/synt-task.ts';
import { BUILTIN_TASKS, startSchedulerService } from '../src/scheduler/wiring.ts';
import { startServer } from '../src/serve.ts';

const SKIP_BROWSER = process.env.METNOS_SKIP_BROWSER === '1';
const NO_SANDBOX = existsSync('/usr/bin/bwrap') ? undefined : 'bubblewrap (/usr/bin/bwrap) is not installed';
const CHROMIUM =
  process.env.METNOS_CHROMIUM ||
  ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));
const TOKEN = 'p'.repeat(43);

const CSV_SUM: DesiredSignature = {
  name: 'csv_sum',
  args: ['column', 'text'],
  piped: [{ arg: 'text', from: 'fs_read', field: 'content.content' }],
  sourceOutput: ['content', 'path'],
  purpose: ['sum', 'amount', 'column'],
};
/** A wished-for name with markup in it: the page must show it as text. */
const HOSTILE = 'fax_send<img src=x data-pwned=1>';

/** The server's engine is not what this test is about: no turn is asked for. */
const engine: ServerEngine = {
  runTurn: async () => {
    throw new Error('no turns in this test');
  },
  feedback: async () => {
    throw new Error('no feedback in this test');
  },
};

let root: string;
let executorsDir: string;
let trustedKeys: PublicKey[];
let server: Awaited<ReturnType<typeof startServer>>;
let service: ReturnType<typeof startSchedulerService>;
let close: () => void;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

async function setup() {
  root = await mkdtemp(join(tmpdir(), 'metnos-proposals-'));
  executorsDir = join(root, 'executors');
  const keyStore = createKeyStore({ configDir: join(root, 'config') });
  trustedKeys = [await keyStore.create('default')];
  const catalog = createCatalog({ root: executorsDir, trustedKeys, stateDir: join(root, 'state') });
  await catalog.load();
  const mnestome = createMnestome({ path: join(root, 'mnestome.sqlite') });
  for (let use = 0; use < 3; use++) {
    mnestome.recordPassing('fs_read', 'csv_sum', false, CSV_SUM);
    mnestome.recordPassing('fs_read', HOSTILE, false, { ...CSV_SUM, name: 'fax_send' });
  }
  const store = createSyntStore({ path: join(root, 'synt.sqlite') });
  const synt = createSynt({
    store,
    catalog,
    mnestome,
    model: createScriptedWise([JSON.stringify(CSV_SUM_SPEC), skeletonAnswer(CSV_SUM_SPEC, CSV_SUM_CODE)]),
    runner: createSandboxRunner(),
    keyStore,
    trustedKeys,
  });
  close = () => {
    store.close();
    mnestome.close();
  };
  service = startSchedulerService({
    path: join(root, 'data', 'scheduler.sqlite'),
    engine: { runTurn: engine.runTurn, maintain: async () => ({}) as never },
    invoker: { invoke: async () => ({ ok: false, error: { class: 'Crashed', message: 'unused' } }) },
    workspace: join(root, 'workspace'),
    timezone: 'UTC',
    tickMs: 3_600_000,
    synt: nightlySteps(
      mnestomeAgerTask({ mnestome, executors: () => catalog.executors().map((executor) => executor.name) }),
      syntSuggestTask({ synt }),
    ),
  });
  server = await startServer({
    token: TOKEN,
    engine,
    port: 0,
    scheduler: service.scheduler,
    api: { executors: { catalog }, proposals: { synt } },
  });
}

if (SKIP_BROWSER)
  console.warn('proposals e2e: skipped because METNOS_SKIP_BROWSER=1 (the browser tests did not run)');

beforeAll(async () => {
  if (SKIP_BROWSER || NO_SANDBOX) return;
  if (!CHROMIUM || !existsSync(CHROMIUM))
    throw new Error(
      `proposals e2e: no Chromium at ${CHROMIUM ?? '/usr/bin/chromium'}: install Debian's chromium (apt-get install -y chromium), or set METNOS_SKIP_BROWSER=1 to skip these tests`,
    );
  await setup();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--disable-gpu'] });
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await service?.stop();
  close?.();
  if (root) await rm(root, { recursive: true, force: true });
});

const skipped = SKIP_BROWSER ? 'METNOS_SKIP_BROWSER=1' : NO_SANDBOX;

describe.skipIf(skipped)(`the synt through the server${skipped ? ` (skipped: ${skipped})` : ''}`, () => {
  it('the 04:30 built-in ages the mnestome, then synt_suggest files the cards', async () => {
    expect(service.builtins.synt).toMatchObject({ name: BUILTIN_TASKS.synt.name, cadence: 'daily@04:30' });
    const dueAt = Date.parse(service.scheduler.nextFire(service.builtins.synt)!);
    expect(new Date(dueAt).toISOString().slice(11, 16)).toBe('04:30');
    const { fired } = await service.scheduler.tick(new Date(dueAt + 1000));
    const run = fired.find((outcome) => outcome.scheduleId === service.builtins.synt.id);
    expect(run).toMatchObject({ ok: true });
    expect(run?.summary).toMatch(/^mnestome: .*; synt_suggest: 2 recurring proto-mnests; filed 2 generate$/);
  });

  it('the Proposals page walks a card from start to an installed executor, and shows every value as text', async () => {
    await page.goto(server.url);
    await page.locator('#token').fill(TOKEN);
    await page.locator('#login-form button').click();
    await page.locator('nav a[data-view=proposals]').click();
    const cards = page.locator('#proposals-list article.proposal');
    await expect.poll(() => cards.count()).toBe(2);
    // the hostile name is text, not markup
    expect(await page.locator('[data-pwned]').count()).toBe(0);
    const hostile = page.locator('article.proposal', { hasText: 'fax_send<img' });
    expect(await hostile.locator('h3').textContent()).toContain(HOSTILE);

    const card = page.locator('article.proposal', { hasText: 'generate csv_sum' });
    await card.locator('button.approve', { hasText: 'Start' }).click();
    const waitingSpec = page.locator('article.proposal', { hasText: 'generate csv_sum' }).locator('pre.spec');
    await waitingSpec.waitFor();
    expect(await waitingSpec.textContent()).toContain('"name": "csv_sum"');

    await page.locator('article.proposal', { hasText: 'generate csv_sum' }).locator('button.approve').click();
    const review = page.locator('article.proposal', { hasText: 'generate csv_sum' }).locator('.review');
    await review.waitFor({ timeout: 30_000 });
    const added = await review.locator('[data-path="main.ts"] .diff-add').allTextContents();
    expect(added.join('')).toContain(
      "+import { defineExecutor, fail, ok } from '@metnos/executor-sdk/define';",
    );
    expect(await review.locator('.digest').textContent()).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(existsSync(join(executorsDir, 'csv_sum'))).toBe(false);

    await page
      .locator('article.proposal', { hasText: 'generate csv_sum' })
      .locator('button.approve', { hasText: 'Approve, sign and install' })
      .click();
    // done cards leave the default listing; "decided ones too" shows it installed
    await expect.poll(() => cards.count(), { timeout: 30_000 }).toBe(1);
    await page.locator('#proposals-all').check();
    const done = page.locator('article.proposal[data-state=done]');
    await done.waitFor();
    expect(await done.locator('.note').textContent()).toMatch(
      /^installed csv_sum@1\.0\.0 \(active\), signed with ed25519:/,
    );
    const verified = await verifyExecutor(join(executorsDir, 'csv_sum'), { trustedKeys });
    expect(verified.manifest.executor.created_by).toMatch(/^synt:r-[0-9a-f]{8}$/);

    // rejecting the other card signs nothing
    await page.locator('article.proposal', { hasText: 'fax_send<img' }).locator('button.deny').click();
    await page.locator('article.proposal[data-state=rejected]').waitFor();
    expect(pageErrors).toEqual([]);
  });

  it('refuses an unknown card, a decision it does not know and an approval without the token', async () => {
    const call = (method: string, path: string, body?: unknown, token = TOKEN) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const module = await fetch(`${server.url}/console/proposals.js`);
    expect(module.headers.get('content-type')).toContain('text/javascript');
    expect(module.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await module.text()).not.toMatch(/\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write/);
    expect((await call('GET', '/api/proposals/p-00000000')).status).toBe(404);
    expect((await call('POST', '/api/proposals/p-00000000', { decision: 'maybe' })).status).toBe(400);
    expect(
      (await call('POST', '/api/proposals/p-00000000', { decision: 'approve' }, 'x'.repeat(43))).status,
    ).toBe(401);
    const listed = (await (await call('GET', '/api/proposals?all=true')).json()) as {
      proposals: Array<{ state: string }>;
    };
    expect(listed.proposals.map((card) => card.state).sort()).toEqual(['done', 'rejected']);
    const decided = listed.proposals[0] as unknown as { id: string };
    const again = await call('POST', `/api/proposals/${decided.id}`, { decision: 'approve' });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: 'conflict' });
  });
});
