import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cli, STACK_LINE, writeWorkspaceConfig } from './__fixtures__/cli.ts';

// The CLI reads the person's credentials.toml from the config dir and hands the set to the
// invoker; the sandbox offers the `mail` handle to the mail seeds. Here the account's servers
// do not resolve, so a run that got the handle fails with Network, one that did not with
// NotConfigured; and a file Metnos must not trust stops the command with one line.

const PASSWORD = 'cli-Credential-Pa55word';
const savedEnv = { ...process.env };
let work: string;
let configDir: string;
const toml = `[mail]
imap = "imap.metnos.test:993"
smtp = "smtp.metnos.test:465"
username = "me@metnos.test"
password_env = "METNOS_CLI_TEST_MAIL_PASSWORD"
`;

const run = () => cli(['executor', 'run', 'mail_folders', '--args', '{}']);

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-cli-credentials-'));
  await mkdir(join(work, 'workspace'));
  await writeWorkspaceConfig(work, 'http://127.0.0.1:9');
  configDir = join(work, 'config');
  await mkdir(configDir, { mode: 0o700 });
  process.env.INIT_CWD = work;
  delete process.env.npm_lifecycle_event;
  process.env.METNOS_CONFIG_DIR = configDir;
  process.env.METNOS_CLI_TEST_MAIL_PASSWORD = PASSWORD;
});

beforeEach(async () => {
  await rm(join(configDir, 'credentials.toml'), { force: true });
});

afterAll(async () => {
  process.env = savedEnv;
  await rm(work, { recursive: true, force: true });
});

describe('credentials.toml', () => {
  it('without the file, the mail seed is NotConfigured; with it, the handle is offered', async () => {
    const without = await run();
    expect(without.code).toBe(1);
    expect(JSON.parse(without.out)).toMatchObject({ ok: false, error: { class: 'NotConfigured' } });
    await writeFile(join(configDir, 'credentials.toml'), toml, { mode: 0o600 });
    const offered = await run();
    const result = JSON.parse(offered.out) as { ok: boolean; error: { class: string; message: string } };
    expect(result).toMatchObject({ ok: false, error: { class: 'Network' } });
    expect(result.error.message).toMatch(/credential "mail": imap\.metnos\.test(:993)?: does not resolve/);
    expect(offered.out + offered.err).not.toContain(PASSWORD);
  });

  it('stops the command with one line for a file others can read, or an unset variable', async () => {
    await writeFile(join(configDir, 'credentials.toml'), toml.replace('password_env', 'password = "x"\n#'), {
      mode: 0o600,
    });
    await chmod(join(configDir, 'credentials.toml'), 0o644);
    const open = await run();
    expect(open.code).toBe(1);
    expect(open.err.trim()).toMatch(
      /^credentials: .*credentials\.toml is readable by other users .*chmod 600/,
    );
    expect(open.err).not.toMatch(STACK_LINE);
    await chmod(join(configDir, 'credentials.toml'), 0o600);
    await writeFile(
      join(configDir, 'credentials.toml'),
      toml.replace('METNOS_CLI_TEST_MAIL_PASSWORD', 'UNSET_VAR_1'),
    );
    const unset = await run();
    expect(unset.code).toBe(1);
    expect(unset.err.trim()).toBe(
      'credentials: [mail] password_env: the environment variable UNSET_VAR_1 is not set',
    );
    expect(unset.out + unset.err).not.toContain(PASSWORD);
  });
});
