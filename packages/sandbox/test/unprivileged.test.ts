import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// CI runs as root. This case re-runs the attack suites as `nobody` (no
// cgroups, a non-root uid outside the sandbox as well), so both kinds of host
// are covered by one `pnpm test`. Run as an unprivileged user, the whole suite
// already is that pass and this case is skipped.
const root = process.getuid?.() === 0;
const setpriv = existsSync('/usr/bin/setpriv') || existsSync('/bin/setpriv');

describe('unprivileged pass', () => {
  it.skipIf(!root || !setpriv)(
    'passes the attack suites as nobody',
    () => {
      const script = join(import.meta.dirname, '..', 'scripts', 'test-unprivileged.ts');
      const run = spawnSync(
        process.execPath,
        [
          '--conditions=metnos-source',
          '--disable-warning=ExperimentalWarning',
          script,
          'test/policy-attacks.test.ts',
          'test/runtime-attacks.test.ts',
          'test/exec-attacks.test.ts',
          'test/host-attacks.test.ts',
          'test/secret-links.test.ts',
          'test/write-quota.test.ts',
          '--reporter=dot',
        ],
        { encoding: 'utf8', timeout: 400_000 },
      );
      const output = `${run.stdout}\n${run.stderr}`;
      expect(run.status, output.slice(-4000)).toBe(0);
      expect(output).toMatch(/Tests\s+.*\d+ passed/);
    },
    420_000,
  );
});
