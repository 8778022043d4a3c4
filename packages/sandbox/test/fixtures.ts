import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type PublicKey, serializePublicKey } from '@metnos/executor-sdk';

/** Writes `<root>/metnos.toml` trusting `key`, so the birth harness finds it. */
export async function trustKeyIn(root: string, key: PublicKey): Promise<void> {
  await writeFile(join(root, 'test.pub'), serializePublicKey(key));
  await writeFile(join(root, 'metnos.toml'), '[workspace]\nroot = "."\nexecutors = "."\ntrusted_keys = ["test.pub"]\n');
}
