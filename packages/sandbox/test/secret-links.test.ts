import { link, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSandboxRunner } from '../src/index.ts';
import { createLab, observingCode } from './fixtures.ts';

// A hardlink is a second name for the same bytes: no rule that walks folders can find every one.
// These cases check the two rules that need no walk.
describe('second names of secrets', () => {
  it('refuses every call while a Metnos secret has a second name, even one the executor never names', async () => {
    const lab = await createLab('metnos-links-');
    const configDir = join(lab.root, 'config');
    await mkdir(join(configDir, 'keys'), { recursive: true });
    await writeFile(join(configDir, 'keys', 'default.key'), 'SECRET-KEY-BYTES');
    const runner = createSandboxRunner({ configDir });
    const workspace = await mkdtemp(join(tmpdir(), 'metnos-links-ws-'));
    const reader = await lab.executor(
      'reader',
      {
        code: observingCode(
          `out.all = await attempt(() => fs.readdirSync(ctx.workspace).map((name) => fs.readFileSync(ctx.workspace + '/' + name, 'utf8')).join('|'));`,
        ),
        profile: { read: ['$WORKSPACE'] },
      },
      runner,
    );
    expect(await reader.invoke({}, { workspace })).toMatchObject({ ok: true });
    await link(join(configDir, 'keys', 'default.key'), join(workspace, 'notes.txt'));
    const result = await reader.invoke({}, { workspace });
    expect(result).toMatchObject({ ok: false, error: { class: 'IsolationUnavailable' } });
    expect(!result.ok && result.error.message).toMatch(/has 2 hard links/);
    expect(JSON.stringify(result)).not.toContain('SECRET-KEY-BYTES');
  });

  for (const depth of [1, 4, 8]) {
    it(`refuses to name a multiply-linked file (link ${depth} folders deep, forbidden folder padded)`, async () => {
      const lab = await createLab('metnos-links-');
      const runner = createSandboxRunner();
      const secrets = join(lab.root, 'secrets');
      await mkdir(secrets);
      for (let index = 0; index < 4200; index++) await writeFile(join(secrets, `pad-${index}`), '');
      await writeFile(join(secrets, 'token'), 'TOKEN-VALUE');
      const workspace = await mkdtemp(join(tmpdir(), 'metnos-links-ws-'));
      const folder = join(workspace, ...Array.from({ length: depth }, (_, index) => `d${index}`));
      await mkdir(folder, { recursive: true });
      await link(join(secrets, 'token'), join(folder, 'innocent.txt'));
      const relative = `${Array.from({ length: depth }, (_, index) => `d${index}`).join('/')}/innocent.txt`;
      const reader = await lab.executor(
        'reader',
        {
          code: observingCode(
            `out.text = await attempt(() => fs.readFileSync(ctx.workspace + '/' + args.path, 'utf8'));`,
          ),
          profile: { read: ['$WORKSPACE'] },
          schema: {
            definitions: {
              Input: { type: 'object', properties: { path: { type: 'string' } } },
              Output: { type: 'object' },
            },
          },
        },
        runner,
      );
      const result = await reader.invoke({ path: relative }, { workspace });
      expect(result).toMatchObject({
        ok: false,
        error: { class: 'PolicyViolation' },
        metadata: { rule: 'hardlink' },
      });
      expect(JSON.stringify(result)).not.toContain('TOKEN-VALUE');
    }, 30_000);
  }
});
