// Puts the signed seed executors and the release public key into apps/cli/seeds/ while
// @metnos/cli is packed (its prepack script), and takes them out again afterwards
// (postpack), so `metnos init` from an installed CLI has seeds to copy and a checkout
// keeps reading the ones in executors/. Usage (from apps/cli):
//   node ../../tooling/scripts/cli-seeds.ts copy | remove
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { copySeeds, REPO } from './packages.ts';

const target = join(REPO, 'apps', 'cli', 'seeds');
const mode = process.argv[2];
if (mode === 'copy') {
  await rm(target, { recursive: true, force: true });
  const names = await copySeeds(target, join(target, 'metnos-release.pub'));
  console.log(`seeds/: ${names.length} seed executors and metnos-release.pub`);
} else if (mode === 'remove') {
  await rm(target, { recursive: true, force: true });
} else {
  console.error('usage: cli-seeds.ts copy | remove');
  process.exitCode = 2;
}
