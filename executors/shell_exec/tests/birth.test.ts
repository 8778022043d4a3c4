import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { birth } from '@metnos/sandbox/birth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const executor = birth(join(import.meta.dirname, '..'));

/** Outside paths are refused by the sandbox's policy check (PolicyViolation) or, failing that, by the executor. */
const refused = {
  ok: false,
  error: { class: expect.stringMatching(/^(PermissionDenied|PolicyViolation)$/) },
};
let workspace: string;

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'metnos-shell-exec-'));
  await mkdir(join(workspace, 'logs'));
  await writeFile(join(workspace, 'notes.txt'), 'pear\napple\npear\n');
  await writeFile(join(workspace, 'logs', 'app.log'), 'ok\nERROR disk full\nok\n');
  await writeFile(join(workspace, 'big.txt'), 'abcdefghij'.repeat(1000));
});

afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
});

const run = (args: Record<string, unknown>) => executor.invoke(args, { workspace });

describe('shell_exec birth', () => {
  it('runs an allowed tool on a workspace file and returns its output and exit code', async () => {
    const result = await run({ command: 'wc', args: ['-l', 'notes.txt'] });
    expect(result).toMatchObject({
      ok: true,
      content: { exit_code: 0, stdout: '3 notes.txt\n', stderr: '', cwd: '.' },
    });
  });

  it('feeds stdin and runs in a sub-folder', async () => {
    const sorted = await run({ command: 'sort', args: ['-u'], stdin: 'pear\napple\npear\n' });
    expect(sorted).toMatchObject({ ok: true, content: { stdout: 'apple\npear\n' } });
    const grep = await run({ command: 'grep', args: ['-n', 'ERROR', 'app.log'], cwd: 'logs' });
    expect(grep).toMatchObject({ ok: true, content: { stdout: '2:ERROR disk full\n', cwd: 'logs' } });
  });

  it('passes arguments verbatim, never through a shell', async () => {
    const result = await run({
      command: 'echo',
      args: ['$HOME', ';', 'rm', 'notes.txt', '|', 'wc', '*.txt', '`id`'],
    });
    expect(result).toMatchObject({ ok: true, content: { stdout: '$HOME ; rm notes.txt | wc *.txt `id`\n' } });
    expect(await run({ command: 'cat', args: ['notes.txt'] })).toMatchObject({
      ok: true,
      content: { exit_code: 0 },
    });
  });

  it('reports a non-zero exit as data, and cuts long output', async () => {
    expect(await run({ command: 'grep', args: ['banana', 'notes.txt'] })).toMatchObject({
      ok: true,
      content: { exit_code: 1, stdout: '' },
    });
    expect(await run({ command: 'cat', args: ['big.txt'], max_output_bytes: 10 })).toMatchObject({
      ok: true,
      content: { stdout: 'abcdefghij', stdout_truncated: true },
    });
  });

  it('refuses tools outside the allow-list with Forbidden', async () => {
    for (const command of ['rm', 'bash', 'sh', 'node', 'curl']) {
      expect(await run({ command, args: ['-c', 'id'] }), command).toMatchObject({
        ok: false,
        error: { class: 'Forbidden' },
      });
    }
    expect(await run({ command: '/bin/ls' })).toMatchObject({ ok: false, error: { class: 'InvalidInput' } });
  });

  it('refuses paths outside the workspace', async () => {
    expect(await run({ command: 'cat', args: ['/etc/passwd'] })).toMatchObject(refused);
    expect(await run({ command: 'cat', args: ['../../../etc/passwd'], cwd: 'logs' })).toMatchObject(refused);
    expect(await run({ command: 'ls', cwd: '..' })).toMatchObject(refused);
  });

  it('kills a program that runs too long with Timeout', async () => {
    const result = await run({ command: 'tail', args: ['-f', 'notes.txt'], timeout_ms: 500 });
    expect(result).toMatchObject({ ok: false, error: { class: 'Timeout' } });
  });
});
