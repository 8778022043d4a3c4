import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { invokedAs, spokenAs } from '../src/output.ts';
import { cli, STACK_LINE, seedCount } from './__fixtures__/cli.ts';

const savedEnv = { ...process.env };
let work: string;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-init-'));
  process.env.INIT_CWD = work;
  process.env.METNOS_CONFIG_DIR = join(work, 'config');
  delete process.env.npm_lifecycle_event;
  delete process.env.METNOS_INVOKED_AS;
});

afterEach(async () => {
  process.env = { ...savedEnv };
  await rm(work, { recursive: true, force: true });
});

describe('metnos init and the author flow outside the checkout', () => {
  it('creates a workspace with verified seeds and a key, then new, sign, run work by name there', async () => {
    const home = join(work, 'home');
    const init = await cli(['init', home]);
    expect(init.code, init.err).toBe(0);
    // every seed of the repository, each checked against the release key
    expect(init.out).toContain(`${seedCount()} seed executors, verified`);
    expect(init.out).toMatch(/your key: "default" ed25519:/);
    expect(await readFile(join(home, 'metnos.toml'), 'utf8')).toMatch(/root = "workspace"/);

    process.env.INIT_CWD = home;
    const created = await cli(['executor', 'new', 'hello']);
    expect(created.out).toContain(join(home, 'executors', 'hello'));
    expect(created.out).toContain('metnos executor sign hello');
    expect((await cli(['executor', 'sign', 'hello'])).out).toMatch(/^signed hello@0\.1\.0/);
    const run = await cli(['executor', 'run', 'hello', '--args', '{"name":"Ada"}']);
    expect(run.code, run.err).toBe(0);
    expect(JSON.parse(run.out)).toMatchObject({ ok: true, content: { greeting: 'Hello, Ada!' } });
    // the same executor by its path
    const byPath = await cli([
      'executor',
      'run',
      join(home, 'executors', 'hello'),
      '--args',
      '{"name":"Bo"}',
    ]);
    expect(JSON.parse(byPath.out)).toMatchObject({ ok: true, content: { greeting: 'Hello, Bo!' } });
    expect((await cli(['executor', 'verify', 'hello'])).out).toMatch(/^ok {2}hello@0\.1\.0/);

    // a changed executor is refused with the reason, not "no invocable executor"
    await appendFile(join(home, 'executors', 'hello', 'main.ts'), '\n// changed\n');
    const refused = await cli(['executor', 'run', 'hello', '--args', '{"name":"Ada"}']);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/hello cannot be invoked:\n {2}hello@0\.1\.0 digest_mismatch \(main\.ts\)/);

    const time = await cli(['ask', 'what time is it?']);
    expect(time.code, time.err).toBe(0);
    expect(time.out).toMatch(/^It is \d\d:\d\d/m);
  }, 60_000);

  it('refuses to initialise over an existing workspace unless asked to', async () => {
    const home = join(work, 'home');
    expect((await cli(['init', home, '--no-key'])).code).toBe(0);
    const again = await cli(['init', home, '--no-key']);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/exists already/);
    expect((await cli(['init', home, '--no-key', '--force'])).code).toBe(0);
  }, 60_000);

  it('says clearly that sign needs a key, and that an unknown name is unknown', async () => {
    const home = join(work, 'home');
    await cli(['init', home, '--no-key']);
    process.env.INIT_CWD = home;
    await cli(['executor', 'new', 'hello']);
    const sign = await cli(['executor', 'sign', 'hello']);
    expect(sign.code).toBe(1);
    expect(sign.err).toMatch(/no key "default" .*metnos keys init/);
    const unknown = await cli(['executor', 'sign', 'nothing_here']);
    expect(unknown.err).toMatch(/no executor "nothing_here"/);
    expect(`${sign.err}${unknown.err}`).not.toMatch(STACK_LINE);
  }, 60_000);
});

describe('help, version and hints', () => {
  it('prints the version', async () => {
    const { code, out } = await cli(['--version']);
    expect(code).toBe(0);
    expect(out).toMatch(/^metnos \d+\.\d+\.\d+ \(node \d+/);
  });

  it('has a page per executor subcommand, and one for feedback', async () => {
    const pages = new Set<string>();
    for (const sub of [
      'new',
      'sign',
      'verify',
      'list',
      'test',
      'run',
      'archive',
      'rehabilitate',
      'promote',
    ]) {
      const { code, out } = await cli(['executor', sub, '--help']);
      expect(code).toBe(0);
      expect(out).toMatch(new RegExp(`^metnos executor ${sub}`));
      pages.add(out);
    }
    expect(pages.size).toBe(9);
    const feedback = await cli(['feedback', '--help']);
    expect(feedback.out).toMatch(/^metnos feedback — tell the memory how a turn went/);
    expect((await cli(['init', '--help'])).out).toMatch(/^metnos init — create a Metnos workspace/);
  });

  it('writes hints the way the CLI was invoked', async () => {
    expect(invokedAs({ npm_lifecycle_event: 'metnos' })).toBe('pnpm metnos');
    expect(invokedAs({ METNOS_INVOKED_AS: 'npx @metnos/cli' })).toBe('npx @metnos/cli');
    expect(invokedAs({})).toBe('metnos');
    let said = '';
    const io = spokenAs({ out: (text) => (said += text), err: () => undefined }, 'pnpm metnos');
    io.out('next: metnos executor sign hello; see `metnos doctor`; ~/.config/metnos stays; metnos.toml too');
    expect(said).toBe(
      'next: pnpm metnos executor sign hello; see `pnpm metnos doctor`; ~/.config/metnos stays; metnos.toml too',
    );
    process.env.METNOS_INVOKED_AS = 'npx @metnos/cli';
    expect((await cli(['--help'])).out).toContain('npx @metnos/cli ask "<request>"');
  });
});
