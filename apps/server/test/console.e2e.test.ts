// The web console in a real browser: Debian's Chromium driven by playwright-core, against a real
// server with a real engine (a loopback model speaking the Ollama protocol), real signed executors
// run in processes, real memory stores, the vaglio's approval store and the scheduler service,
// which delivers a schedule's result through the real Telegram channel to a loopback Bot API.
//
// Chromium missing is a failure with the reason, not a skip: METNOS_SKIP_BROWSER=1 is the only
// way to skip, and it says so.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDefaultEmbedder } from '@metnos/autopath';
import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import {
  createAuditLog,
  createCatalog,
  createInvoker,
  createProcessRunner,
  generateSigningKey,
} from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { createEngine, createGapLog, createOllamaModel } from '@metnos/planner';
import { startOllamaServer } from '@metnos/planner/test';
import { createApprovalStore, createVaglio } from '@metnos/vaglio';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApprovalsFlow, createApprovalsFlow } from '../src/approvals-flow.ts';
import { createPendingCalls } from '../src/routes/approvals.ts';
import { startSchedulerService, telegramDelivery } from '../src/scheduler/wiring.ts';
import { startServer } from '../src/serve.ts';
import { createTelegramChannel, createTelegramClient } from '../src/telegram/index.ts';
import { type FakeTelegram, startFakeTelegram } from './telegram-server.ts';

const SKIP = process.env.METNOS_SKIP_BROWSER === '1';
/** METNOS_CHROMIUM when set (and only it), else Debian's chromium. */
const CHROMIUM =
  process.env.METNOS_CHROMIUM ||
  ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));
const TOKEN = 'c'.repeat(43);
const SCREENSHOT = join(process.env.TMPDIR ?? tmpdir(), 'metnos-console.png');

/** A request whose text holds markup: the console must show it as text. */
const READ_REQUEST = 'read diary.md <img src=x data-pwned=1>';
const WRITE_REQUEST = 'write hello to out.md';
/** The request a schedule made in the console runs; its answer goes to the Telegram chat. */
const SCHEDULED_REQUEST = 'read diary.md for me';
const BOT_TOKEN = '123456:console-e2e-bot';
/** The one chat the channel allows, and the chat `telegram` delivers to. */
const CHAT_ID = 4242;
const intent = (verb: string, object: string) => ({
  text: JSON.stringify({ verb, object, qualifiers: [] }),
});
const readPlan = {
  text: JSON.stringify({
    steps: [{ tool: 'fs_read', args: { path: 'diary.md' } }],
    final_message: '${step1.content}',
  }),
};
const writePlan = {
  text: JSON.stringify({
    steps: [{ tool: 'note_write', args: { path: 'out.md', text: 'hello' } }],
    final_message: 'written',
  }),
};

let root: string;
let workspace: string;
let model: Awaited<ReturnType<typeof startOllamaServer>>;
let server: Awaited<ReturnType<typeof startServer>>;
let schedules: ReturnType<typeof startSchedulerService>;
let telegram: FakeTelegram;
let approvals: ReturnType<typeof createApprovalStore>;
let closeStores: () => void;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
const requestUrls: string[] = [];

async function setup() {
  root = await mkdtemp(join(tmpdir(), 'metnos-console-'));
  workspace = join(root, 'workspace');
  await mkdir(workspace, { recursive: true });
  await writeFile(join(workspace, 'diary.md'), 'dear diary\n');
  const key = await generateSigningKey();
  const executors = join(root, 'executors');
  await writeSignedExecutor({
    root: executors,
    name: 'fs_read',
    key,
    code: `import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineExecutor, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run(args, ctx) { return ok(readFileSync(join(ctx.workspace, args.path), 'utf8')); } });
`,
    schema: {
      definitions: {
        Input: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        Output: { type: 'string' },
      },
    },
  });
  // side effects, not idempotent: the vaglio opens a reinforced confirmation before it runs
  await writeSignedExecutor({
    root: executors,
    name: 'note_write',
    key,
    contract: { side_effects: true, idempotent: false },
    code: `import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineExecutor, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run(args, ctx) { writeFileSync(join(ctx.workspace, args.path), args.text); return ok('written'); } });
`,
    schema: {
      definitions: {
        Input: {
          type: 'object',
          properties: { path: { type: 'string' }, text: { type: 'string' } },
          required: ['path', 'text'],
        },
        Output: { type: 'string' },
      },
    },
  });
  const catalog = createCatalog({ root: executors, trustedKeys: [key] });
  await catalog.load();
  const invoker = createInvoker({
    catalog,
    runner: createProcessRunner(),
    audit: createAuditLog({ workspace }),
  });
  const fastpath = createFastpathStore({ path: join(root, 'fastpath.sqlite') });
  const autopath = createAutopathStore({ path: join(root, 'autopath.sqlite') });
  const gaps = createGapLog({ path: join(root, 'gaps.sqlite') });
  closeStores = () => {
    fastpath.close();
    autopath.close();
    gaps.close();
  };
  model = await startOllamaServer();
  approvals = createApprovalStore({ path: join(root, 'approvals.json') });
  const pending = createPendingCalls();
  // as metnos serve wires it: the vaglio opens the confirmation, the approvals flow holds the call,
  // and an approval re-runs the request with that call, and only it, let through once
  let flow: ApprovalsFlow | undefined;
  const engine = createEngine({
    catalog,
    invoker,
    reviewer: createVaglio({ approvals }),
    approved: (call) => flow?.approved(call) ?? false,
    models: {
      fast: createOllamaModel({ model: 'qwen3:8b', baseUrl: model.url, think: false }),
    },
    embedder: createDefaultEmbedder(),
    fastpath,
    autopath,
    gaps,
    workspace,
  });
  flow = createApprovalsFlow({ engine, approvals, catalog, pending });
  // the real Telegram channel over a loopback Bot API; only its delivery is used here (no polling)
  telegram = await startFakeTelegram(BOT_TOKEN);
  const channel = createTelegramChannel({
    client: createTelegramClient({ token: BOT_TOKEN, baseUrl: telegram.baseUrl, requestTimeoutMs: 5000 }),
    allowedChatIds: [CHAT_ID],
    handleTurn: async () => ({ text: 'not used in this test' }),
    resolveApproval: async () => undefined,
    logger: { info: () => {}, warn: () => {} },
  });
  schedules = startSchedulerService({
    path: join(root, 'data', 'scheduler.sqlite'),
    engine: flow.wrap(engine),
    invoker,
    workspace,
    deliver: telegramDelivery(channel, CHAT_ID),
    tickMs: 200,
    timezone: 'UTC',
  });
  server = await startServer({
    token: TOKEN,
    engine: flow.wrap(engine),
    port: 0,
    scheduler: schedules.scheduler,
    api: {
      memory: { fastpath, autopath, gaps },
      executors: { catalog },
      approvals: { approvals, pending, onDecision: flow.onDecision },
      audit: { auditDir: join(workspace, '.audit') },
    },
  });
}

if (SKIP) console.warn('console e2e: skipped because METNOS_SKIP_BROWSER=1 (the browser tests did not run)');

beforeAll(async () => {
  if (SKIP) return;
  if (!CHROMIUM || !existsSync(CHROMIUM))
    throw new Error(
      `console e2e: no Chromium at ${CHROMIUM ?? '/usr/bin/chromium'}: install Debian's chromium (apt-get install -y chromium; .ci/run does it as root), or set METNOS_SKIP_BROWSER=1 to skip these tests`,
    );
  await setup();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--disable-gpu'] });
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('request', (request) => requestUrls.push(request.url()));
  page.on('dialog', (dialog) => void dialog.accept());
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await schedules?.stop();
  closeStores?.();
  await model?.close();
  await telegram?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe.skipIf(SKIP)('the web console in Chromium', () => {
  it('is served without the token, with a strict policy, and holds no token; the API still asks for it', async () => {
    const response = await fetch(`${server.url}/`);
    expect(response.status).toBe(200);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await response.text();
    expect(html).not.toContain(TOKEN);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    const script = await fetch(`${server.url}/console/console.js`);
    expect(script.headers.get('content-type')).toContain('text/javascript');
    expect(await script.text()).not.toMatch(/\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write/);
    expect((await fetch(`${server.url}/favicon.ico`)).status).toBe(204);
    expect((await fetch(`${server.url}/api/health`)).status).toBe(401);
    expect((await fetch(`${server.url}/console/other.js`)).status).toBe(401);
    expect((await fetch(`${server.url}/`, { method: 'POST' })).status).toBe(401);
  });

  it('asks for the token once, refuses a wrong one, and keeps it out of every address', async () => {
    await page.goto(server.url);
    await page.locator('#token').fill('w'.repeat(43));
    await page.locator('#login-form button').click();
    await expect.poll(() => page.locator('#login-error').textContent()).toContain('not this server');
    await page.locator('#token').fill(TOKEN);
    await page.locator('#login-form button').click();
    await page.locator('#nav').waitFor({ state: 'visible' });
    // the one error expected: the wrong token's 401
    expect(pageErrors.splice(0)).toEqual([expect.stringContaining('401')]);
    expect(await page.evaluate(() => sessionStorage.getItem('metnos.token'))).toBe(TOKEN);
    expect(await page.locator('#token').inputValue()).toBe('');
    // a reload keeps the tab's token: no second paste
    await page.reload();
    await page.locator('#view-chat').waitFor({ state: 'visible' });
  });

  it('answers a chat turn with its progress and layer badge, then from memory, and takes feedback', async () => {
    model.push(intent('read', 'file'), readPlan);
    await page.locator('#chat-input').fill(READ_REQUEST);
    await page.locator('#chat-form button').click();
    const first = page.locator('.turn').first();
    await first.locator('.answer .message').waitFor();
    expect(await first.locator('.answer .message').textContent()).toBe('dear diary\n');
    expect(await first.locator('.badge').textContent()).toBe('engine');
    const progress = await first.locator('.progress li').allTextContents();
    expect(progress[0]).toBe('started');
    expect(progress).toContain('trying fastpath');
    expect(progress).toContain('trying proposal');
    expect(progress.some((line) => line.startsWith('fastpath passed: no exact shortcut'))).toBe(true);
    expect(progress).toContain('step 1: fs_read…');
    expect(progress).toContain('step 1: fs_read ✓');
    // the request is shown as text, never as markup
    expect(await first.locator('.request').textContent()).toBe(READ_REQUEST);
    expect(await page.locator('[data-pwned]').count()).toBe(0);

    const before = model.requests.length;
    await page.locator('#chat-input').fill(READ_REQUEST);
    await page.locator('#chat-form button').click();
    const second = page.locator('.turn').first();
    await second.locator('.answer .message').waitFor();
    expect(await second.locator('.badge').textContent()).toBe('fastpath');
    expect(model.requests.length).toBe(before);

    await second.locator('button.feedback-up').click();
    await expect
      .poll(() => second.locator('.feedback-status').textContent())
      .toContain('feedback “up” recorded');
  });

  it('forgets a remembered plan from the memory browser', async () => {
    await page.locator('nav a[data-view=memory]').click();
    const rows = page.locator('#memory-fastpaths tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(1);
    // the request as text in the listing too
    expect(await rows.first().textContent()).toContain('read diary.md <img src=x');
    expect(await page.locator('[data-pwned]').count()).toBe(0);
    await rows.first().locator('button.forget').click();
    await page.locator('#memory-fastpaths p.muted', { hasText: '0 remembered' }).waitFor();
    expect(await rows.count()).toBe(0);
  });

  it('shows a call that waits for approval, approves it bound to its hash, and shows the run it let through', async () => {
    await page.locator('nav a[data-view=chat]').click();
    model.push(intent('write', 'file'), writePlan);
    await page.locator('#chat-input').fill(WRITE_REQUEST);
    await page.locator('#chat-form button').click();
    const turn = page.locator('.turn').first();
    await turn.locator('.answer').waitFor();
    await turn.locator('.progress li[data-event=approval]').waitFor();
    expect(await turn.locator('.progress li[data-event=approval]').textContent()).toContain(
      'waiting for your approval: note_write (step 1)',
    );

    await turn.locator('.progress a[href="#approvals"]').click();
    const card = page.locator('#approvals-list .approval').first();
    await card.waitFor();
    expect(await card.locator('h3').textContent()).toMatch(/^note_write@/);
    expect(await card.locator('pre').textContent()).toContain('"path": "out.md"');
    const id = await card.getAttribute('data-id');
    const hash = await card.locator('code').textContent();
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    // approving re-runs the request: the model plans it again, and this time the call runs
    model.push(intent('write', 'file'), writePlan);
    await card.locator('button.approve').click();
    const resumed = card.locator('.answer');
    await resumed.waitFor();
    expect(await card.locator('.decision').textContent()).toMatch(/^approved/);
    expect(await resumed.locator('.message').textContent()).toBe('written');
    expect(await readFile(join(workspace, 'out.md'), 'utf8')).toBe('hello');
    // the approval was for that hash, and is used up
    expect(await approvals.get(id!)).toMatchObject({ callHash: hash });
    expect((await approvals.get(id!))?.state).not.toBe('pending');
    await page.locator('button[data-refresh=approvals]').click();
    await page.locator('#approvals-list', { hasText: 'nothing waits for you' }).waitFor();
  });

  it('creates a schedule from a sentence after showing the parsed cadence, sees it fire, runs it now and reads its history', async () => {
    await page.locator('nav a[data-view=schedules]').click();
    await page.locator('#schedules-list table').waitFor(); // the built-ins are listed
    await page.locator('#schedule-kind').selectOption('executor');
    await page.locator('#schedule-target').fill('fs_read');
    await page.locator('#schedule-args').fill('{"path": "diary.md"}');
    await page.locator('#schedule-when').fill('every minute');
    await page.locator('#schedule-form button[type=submit]').click();
    const cadence = page.locator('#schedule-preview code.cadence');
    await cadence.waitFor();
    expect(await cadence.textContent()).toBe('every_1_minutes');
    expect(await page.locator('#schedule-preview').textContent()).toContain('every minute');
    // nothing exists until it is confirmed
    expect(schedules.scheduler.list().filter((s) => s.target.kind === 'executor')).toHaveLength(0);
    await page.locator('#schedule-preview button.confirm').click();
    await page.locator('#schedule-preview', { hasText: 'created' }).waitFor();
    const created = schedules.scheduler.list().find((s) => s.target.kind === 'executor');
    expect(created?.cadence).toBe('every_1_minutes');
    const id = created!.id;

    // the first slot is the creation instant: the scheduler's next tick fires it
    const actions = page.locator(`#schedules-list .actions[data-schedule="${id}"]`);
    await actions.locator('button', { hasText: 'History' }).click();
    const slots = page.locator('#schedule-history table').first().locator('tbody tr');
    await expect
      .poll(
        async () => {
          await actions.locator('button', { hasText: 'History' }).click();
          return slots.count();
        },
        { timeout: 15_000 },
      )
      .toBeGreaterThanOrEqual(1);
    // the list shows a slot as it is claimed and runs; it ends ok with the executor's output
    await expect
      .poll(
        async () => {
          await actions.locator('button', { hasText: 'History' }).click();
          return slots.last().textContent();
        },
        { timeout: 15_000 },
      )
      .toMatch(/ok.*fs_read: dear diary/);

    const fired = await slots.count();
    await actions.locator('button', { hasText: 'Run now' }).click();
    await page.locator('#schedules-list .schedule-status', { hasText: `${id} fired: ok` }).waitFor();
    await expect.poll(() => slots.count()).toBe(fired + 1);

    await page
      .locator(`#schedules-list .actions[data-schedule="${id}"] button`, { hasText: 'Pause' })
      .click();
    await page
      .locator(`#schedules-list .actions[data-schedule="${id}"] button`, { hasText: 'Resume' })
      .waitFor();
    expect(schedules.scheduler.get(id)?.state).toBe('paused');
  });

  it('creates a schedule for a request with the channel telegram, sees it fire, and the chat gets its answer', async () => {
    await page.locator('nav a[data-view=schedules]').click();
    await page.locator('#schedules-list table').waitFor();
    // the engine answers the request (the model reads and plans it, unless memory answers first)
    model.push(intent('read', 'file'), readPlan);
    await page.locator('#schedule-kind').selectOption('request');
    await page.locator('#schedule-target').fill(SCHEDULED_REQUEST);
    await page.locator('#schedule-when').fill('every minute');
    await page.locator('#schedule-channel').fill('telegram');
    await page.locator('#schedule-form button[type=submit]').click();
    await page.locator('#schedule-preview code.cadence').waitFor();
    await page.locator('#schedule-preview button.confirm').click();
    await page.locator('#schedule-preview', { hasText: 'created' }).waitFor();
    const created = schedules.scheduler.list().find((s) => s.target.kind === 'request');
    expect(created).toMatchObject({ cadence: 'every_1_minutes', channel: 'telegram' });
    const id = created!.id;
    const row = page.locator('#schedules-list tr', { has: page.locator(`code:text-is("${id}")`) });
    expect(await row.textContent()).toContain(`ask: ${SCHEDULED_REQUEST} → telegram`);

    // the first slot fires on the next tick; the console shows it ok with the engine's answer
    const actions = page.locator(`#schedules-list .actions[data-schedule="${id}"]`);
    const history = page.locator('#schedule-history', { hasText: `History of ${id}` });
    const slots = history.locator('table').first().locator('tbody tr');
    await expect
      .poll(
        async () => {
          await actions.locator('button', { hasText: 'History' }).click();
          await history.waitFor();
          return slots.last().textContent();
        },
        { timeout: 15_000 },
      )
      .toMatch(/ok\d+dear diary/);
    // delivered: the summary is the answer alone, with no note of a delivery that did not happen
    expect(await slots.last().textContent()).toMatch(/ok\d+dear diary\n$/);

    // and the loopback Bot API got the answer, for the allowed chat
    await telegram.waitFor(() => telegram.sent.some((message) => message.chat_id === CHAT_ID), 15_000);
    expect(telegram.sent).toEqual([expect.objectContaining({ chat_id: CHAT_ID, text: 'dear diary\n' })]);

    await actions.locator('button', { hasText: 'Cancel' }).click();
    await expect.poll(() => schedules.scheduler.get(id)?.state).toBe('cancelled');
  });

  it('searches the audit by day and by trace', async () => {
    await page.locator('nav a[data-view=audit]').click();
    await page.locator('#audit-form button').click();
    const rows = page.locator('#audit-results tbody tr');
    await rows.first().waitFor();
    const text = await page.locator('#audit-results').textContent();
    expect(text).toContain('fs_read@');
    expect(text).toContain('scheduler');
    const trace = await rows.first().locator('a').textContent();
    await rows.first().locator('a').click();
    await expect.poll(() => page.locator('#audit-trace').inputValue()).toBe(trace);
    await expect
      .poll(async () => (await rows.allTextContents()).every((row) => row.includes(trace!)))
      .toBe(true);
  });

  it('lists the executors with their states', async () => {
    await page.locator('nav a[data-view=executors]').click();
    const row = page.locator('#executors-list tr', { hasText: 'note_write' });
    await row.waitFor();
    expect(await row.locator('.state').textContent()).toBe('active');
    await row.locator('button', { hasText: 'Archive' }).click();
    await page
      .locator('#executors-list tr', { hasText: 'note_write' })
      .locator('.state', { hasText: 'archived' })
      .waitFor();
    await page
      .locator('#executors-list tr', { hasText: 'note_write' })
      .locator('button', { hasText: 'Rehabilitate' })
      .click();
    await page
      .locator('#executors-list tr', { hasText: 'note_write' })
      .locator('.state', { hasText: 'active' })
      .waitFor();
  });

  it('kept the token out of every address, raised no page error, and leaves a screenshot', async () => {
    await page.locator('nav a[data-view=chat]').click();
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    console.log(`console e2e: screenshot at ${SCREENSHOT}`);
    expect((await readFile(SCREENSHOT)).subarray(1, 4).toString()).toBe('PNG');
    expect(requestUrls.length).toBeGreaterThan(5);
    for (const url of requestUrls) expect(url).not.toContain(TOKEN);
    expect(await page.content()).not.toContain(TOKEN);
    expect(pageErrors).toEqual([]);
  });
});
