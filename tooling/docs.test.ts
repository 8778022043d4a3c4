import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from './scripts/docs/environment.ts';
import { runProcess } from './scripts/docs/run-process.ts';

describe('the READMEs', () => {
  it('run as written: every runnable block passes, every other command block says why it does not run', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    // what vitest set for itself is not what a reader's shell has
    for (const name of Object.keys(env)) if (/^(VITEST|NODE_ENV$|TEST$)/.test(name)) delete env[name];
    const outcome = await runProcess(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', join(REPO, 'tooling', 'scripts', 'docs-check.ts')],
      { cwd: REPO, env, timeoutMs: 900_000 },
    );
    expect(outcome.code, outcome.output).toBe(0);
    expect(outcome.output).toContain('docs check passed');
  });
});
