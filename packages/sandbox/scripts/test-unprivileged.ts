// Re-runs this package's attack suite as an unprivileged user (default
// `nobody`), the way a laptop runs Metnos: no cgroups, a non-root uid outside
// the sandbox too. Run as root:
//   node --conditions=metnos-source packages/sandbox/scripts/test-unprivileged.ts [vitest filters…]
// The Node binary is copied to a folder the user can read (the npx copy
// usually sits under /root), and HOME points at a fresh folder it owns.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const user = process.env.METNOS_UNPRIVILEGED_USER ?? 'nobody';
if (process.getuid?.() !== 0) {
  console.error('run this as root: it switches to an unprivileged user with setpriv');
  process.exit(2);
}
const ids = spawnSync('id', ['-u', user], { encoding: 'utf8' });
const groups = spawnSync('id', ['-g', user], { encoding: 'utf8' });
if (ids.status !== 0) {
  console.error(`no user ${user}`);
  process.exit(2);
}
const uid = Number(ids.stdout.trim());
const gid = Number(groups.stdout.trim());
const base = `/tmp/metnos-unprivileged-${uid}`;
mkdirSync(base, { recursive: true, mode: 0o755 });
chmodSync(base, 0o755);
const node = join(base, 'node');
const source = statSync(process.execPath);
let current: ReturnType<typeof statSync> | undefined;
try {
  current = statSync(node);
} catch {
  current = undefined;
}
if (!current || current.size !== source.size || current.mtimeMs < source.mtimeMs) {
  copyFileSync(process.execPath, `${node}.partial`);
  chmodSync(`${node}.partial`, 0o755);
  spawnSync('mv', [`${node}.partial`, node]);
}
const home = join(base, 'home');
mkdirSync(home, { recursive: true });
chownSync(home, uid, gid);
const packageDir = join(import.meta.dirname, '..');
const require = createRequire(join(packageDir, '..', '..', 'package.json'));
const vitest = join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
const run = spawnSync(
  'setpriv',
  [
    `--reuid=${uid}`,
    `--regid=${gid}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--',
    node,
    vitest,
    'run',
    '--configLoader',
    'runner',
    '--root',
    packageDir,
    '--exclude',
    'test/unprivileged.test.ts',
    ...process.argv.slice(2),
  ],
  {
    stdio: 'inherit',
    cwd: packageDir,
    env: {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: home,
      TMPDIR: '/tmp',
      LANG: 'C.UTF-8',
      METNOS_UNPRIVILEGED: '1',
      CI: '1',
    },
  },
);
process.exit(run.status ?? 1);
