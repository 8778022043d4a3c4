import { linkSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxRunner, type SandboxRunner } from '../src/index.ts';
import { createLab, type Lab, observingCode } from './fixtures.ts';

// Every case here must be refused before any process starts: the executor
// below writes a marker into the workspace whenever it runs.
const MARKER_CODE = observingCode(
  `fs.writeFileSync(ctx.workspace + '/ran-' + process.pid, 'x'); out.ran = true;`,
);

describe('policy-time refusals (no process starts)', () => {
  let lab: Lab;
  let runner: SandboxRunner;
  let workspace: string;
  let home: string;
  let harness: Awaited<ReturnType<Lab['executor']>>;

  const markers = () => readdirSync(workspace).filter((entry) => entry.startsWith('ran-'));

  async function expectRefused(args: unknown, rule: string, target = harness) {
    const result = await target.invoke(args, { workspace });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.class).toBe('PolicyViolation');
    expect(result.metadata?.rule).toBe(rule);
    expect(markers()).toEqual([]);
  }

  beforeAll(async () => {
    lab = await createLab();
    home = join(lab.root, 'home');
    workspace = join(lab.root, 'workspace');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'id_ed25519'), 'CANARY-PRIVATE-KEY');
    mkdirSync(join(workspace, 'notes'), { recursive: true });
    writeFileSync(join(workspace, 'notes', 'a.md'), 'hello');
    symlinkSync(join(home, '.ssh'), join(workspace, 'keys'));
    symlinkSync('/proc/self/root/etc', join(workspace, 'etc-link'));
    mkdirSync(join(home, '.ssh', 'sub'));
    symlinkSync(join(home, '.ssh', 'sub'), join(workspace, 'drafts'));
    linkSync(join(home, '.ssh', 'id_ed25519'), join(workspace, 'innocent.txt'));
    runner = createSandboxRunner({ home });
    harness = await lab.executor(
      'marker',
      { code: MARKER_CODE, profile: { read: ['$WORKSPACE', '$HOME'], write: ['$WORKSPACE'] } },
      runner,
    );
  });
  afterAll(() => rm(lab.root, { recursive: true, force: true }));

  it('runs when the arguments stay inside the profile (control case)', async () => {
    const result = await harness.invoke({ path: 'notes/a.md' }, { workspace });
    expect(result).toMatchObject({ ok: true, content: { ran: true } });
    for (const marker of markers()) await rm(join(workspace, marker));
  });

  it('treats arguments the schema declares as free text as data, and still checks the others', async () => {
    const textual = await lab.executor(
      'textual',
      {
        code: MARKER_CODE,
        profile: { read: ['$WORKSPACE'], write: ['$WORKSPACE'] },
        schema: {
          definitions: {
            Input: {
              type: 'object',
              properties: { query: { type: 'string', format: 'text' }, path: { type: 'string' } },
              additionalProperties: false,
            },
            Output: { type: 'object' },
          },
        },
      },
      runner,
    );
    const searched = await textual.invoke({ query: '/api/v1 and /etc/passwd' }, { workspace });
    expect(searched).toMatchObject({ ok: true, content: { ran: true } });
    for (const marker of markers()) await rm(join(workspace, marker));
    await expectRefused({ query: 'fine', path: '/etc/passwd' }, 'forbidden-path', textual);
  });

  it('refuses /root/.ssh directly', () => expectRefused({ path: '/root/.ssh/id_rsa' }, 'forbidden-path'));
  it('refuses ~/.ssh through the tilde', () =>
    expectRefused({ path: '~/.ssh/id_ed25519' }, 'forbidden-path'));
  it('refuses a secret through a symlink inside the workspace', () =>
    expectRefused({ path: 'keys/id_ed25519' }, 'forbidden-path'));
  it('refuses /etc/passwd through a symlink to /proc/self/root', () =>
    expectRefused({ path: join(workspace, 'etc-link', 'passwd') }, 'forbidden-path'));
  it('refuses /proc/self/root spelled out', () =>
    expectRefused({ path: '/proc/self/root/etc/passwd' }, 'forbidden-path'));
  it('refuses a climb out with ..', () =>
    expectRefused({ path: `${workspace}/../../../root/.ssh/id_rsa` }, 'forbidden-path'));
  it('refuses a .. that climbs from a symlink target, not from the link (lexically it stays in the workspace)', () =>
    expectRefused({ path: 'drafts/../id_ed25519' }, 'forbidden-path'));
  it('refuses a climb under any key', () =>
    expectRefused({ name: '../../../../../../root/.ssh/id_rsa' }, 'forbidden-path'));
  it('refuses a relative climb under a path key', () =>
    expectRefused({ file: '../../../../../../etc/shadow' }, 'forbidden-path'));
  it('refuses a hardlink to a secret file', () => expectRefused({ path: 'innocent.txt' }, 'hardlink'));
  it("refuses the workspace's audit ledger", () =>
    expectRefused({ path: '.audit/executors/2026-01-01.jsonl' }, 'forbidden-path'));
  it('refuses /etc/passwd (the walk-through case)', () =>
    expectRefused({ path: '/etc/passwd' }, 'forbidden-path'));
  it('refuses /sys, /boot and block devices', async () => {
    await expectRefused({ path: '/sys/kernel/notes' }, 'forbidden-path');
    await expectRefused({ path: '/boot' }, 'forbidden-path');
    await expectRefused({ path: '/dev/sda' }, 'forbidden-path');
  });
  it('refuses file:// URLs into forbidden paths', () =>
    expectRefused({ source: 'file:///etc/shadow' }, 'forbidden-path'));
  it('refuses paths nested deep in arrays and objects', () =>
    expectRefused(
      { batch: [{ ok: 'x' }, { items: ['notes/a.md', '/root/.gnupg/secring.gpg'] }] },
      'forbidden-path',
    ));
  it('refuses a destination outside the allow-lists', () =>
    expectRefused({ dest: '/tmp/elsewhere/out.txt' }, 'outside-allow-list'));
  it('refuses a URL argument when the profile has no network', () =>
    expectRefused({ url: 'https://example.com/' }, 'domain-not-allowed'));

  it('writes an audit line for each refusal', async () => {
    const dir = join(workspace, '.audit', 'sandbox');
    const lines = readdirSync(dir).flatMap((file) =>
      readFileSync(join(dir, file), 'utf8').trim().split('\n'),
    );
    const entries = lines.map(
      (line) => JSON.parse(line) as { event: string; rule: string; executor: string },
    );
    expect(entries.length).toBeGreaterThanOrEqual(10);
    expect(
      entries.every(
        (entry) => entry.event === 'policy_violation' && ['marker', 'textual'].includes(entry.executor),
      ),
    ).toBe(true);
    expect(entries.map((entry) => entry.rule)).toContain('hardlink');
  });

  it('refuses a profile that grants a home that is /root', async () => {
    const rootRunner = createSandboxRunner({ home: '/root', audit: false });
    const wide = await lab.executor(
      'wide_home',
      { code: MARKER_CODE, profile: { read: ['$HOME'], write: ['$WORKSPACE'] } },
      rootRunner,
    );
    const result = await wide.invoke({}, { workspace });
    expect(result).toMatchObject({
      ok: false,
      error: { class: 'PolicyViolation' },
      metadata: { rule: 'profile-forbidden-path' },
    });
    expect(markers()).toEqual([]);
  });

  it('refuses a profile that grants / (never bind the root and subtract)', async () => {
    const rooted = await lab.executor(
      'rooted',
      { code: MARKER_CODE, profile: { read: ['/'], write: ['$WORKSPACE'] } },
      runner,
    );
    await expectRefused({}, 'profile-too-broad', rooted);
  });

  describe('network allow-list', () => {
    let net: Awaited<ReturnType<Lab['executor']>>;
    beforeAll(async () => {
      net = await lab.executor(
        'net',
        { code: MARKER_CODE, profile: { write: ['$WORKSPACE'], domains: ['api.example.com'] } },
        runner,
      );
    });
    it('refuses a host that is not on the list', () =>
      expectRefused({ url: 'https://evil.example.net/x' }, 'domain-not-allowed', net));
    it('refuses IP literals, loopback included', () =>
      expectRefused({ url: 'http://127.0.0.1:8080/' }, 'ip-literal', net));
    it('refuses the cloud metadata address', () =>
      expectRefused({ endpoint: 'http://169.254.169.254/latest/meta-data/' }, 'ip-literal', net));
    it('refuses an allowed host on an unlisted port', () =>
      expectRefused({ url: 'https://api.example.com:8443/' }, 'domain-not-allowed', net));
    it('accepts an allowed host', async () => {
      const result = await net.invoke({ url: 'https://api.example.com/v1' }, { workspace });
      expect(result.ok).toBe(true);
      for (const marker of markers()) await rm(join(workspace, marker));
    });
    it('refuses profiles with broad wildcards or IP literals', async () => {
      const broad = await lab.executor(
        'broad',
        { code: MARKER_CODE, profile: { write: ['$WORKSPACE'], domains: ['*.co.uk'] } },
        runner,
      );
      await expectRefused({}, 'profile-bad-domain', broad);
      const literal = await lab.executor(
        'literal',
        { code: MARKER_CODE, profile: { write: ['$WORKSPACE'], domains: ['10.0.0.1'] } },
        runner,
      );
      await expectRefused({}, 'profile-bad-domain', literal);
    });
  });

  describe('honest tiers', () => {
    it('refuses a full-tier executor on a runner capped at standard, naming what is missing', async () => {
      const capped = createSandboxRunner({ home, tier: 'standard', audit: false });
      expect(capped.tier).toBe('standard');
      const strict = await lab.executor(
        'strict',
        { code: MARKER_CODE, profile: { write: ['$WORKSPACE'] } },
        capped,
      );
      const result = await strict.invoke({}, { workspace });
      expect(result).toMatchObject({ ok: false, error: { class: 'IsolationUnavailable' } });
      if (!result.ok)
        expect(result.error.message).toMatch(/requires isolation tier "full".*capped at tier "standard"/);
      expect(markers()).toEqual([]);
    });
    it('refuses code:exec below the full tier even when the profile accepts less', async () => {
      const capped = createSandboxRunner({ home, tier: 'standard', audit: false });
      const coder = await lab.executor(
        'coder',
        { code: MARKER_CODE, profile: { write: ['$WORKSPACE'], tier: 'basic' }, capabilities: ['code:exec'] },
        capped,
      );
      const result = await coder.invoke({}, { workspace });
      expect(result).toMatchObject({ ok: false, error: { class: 'IsolationUnavailable' } });
      if (!result.ok) expect(result.error.message).toContain('code:exec');
      expect(markers()).toEqual([]);
    });
  });
});
