// Signs every seed executor under executors/ with a key from the user's key
// store (default "metnos-release"). Usage:
//   pnpm sign:seeds [key-name]
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createKeyStore, signExecutor } from '../../packages/executor-sdk/src/index.ts';

const keyName = process.argv[2] ?? 'metnos-release';
const root = join(import.meta.dirname, '..', '..', 'executors');
const key = await createKeyStore().load(keyName);
for (const name of (await readdir(root)).sort()) {
  const dir = join(root, name);
  const isExecutor = await stat(join(dir, 'manifest.toml')).then(
    () => true,
    () => false,
  );
  if (!isExecutor) continue;
  const result = await signExecutor(dir, key);
  console.log(`signed ${result.name}@${result.version} with ${result.keyId}`);
}
