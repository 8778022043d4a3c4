import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateSigningKey, type SigningKey } from '../keys.ts';
import { scaffoldManifest } from '../scaffold.ts';
import { signExecutor } from '../sign.ts';

/** Options of {@link writeSignedExecutor}. */
export interface ExecutorFixtureOptions {
  /** The executors directory. */
  root: string;
  name: string;
  version?: string;
  /** Write into `<root>/<name>/<version>/` instead of `<root>/<name>/`. */
  versioned?: boolean;
  /** The code file (main.ts). Default: returns `{ echo: args }`. */
  code?: string;
  /** schema.json content. Default: any object in, any object out. */
  schema?: Record<string, unknown>;
  /** Replaces the `[sandbox]` … `[audit]` part of the manifest. */
  sandboxToml?: string;
  errorClasses?: string[];
  /** The contract's flags. Default: idempotent, no side effects. */
  contract?: { idempotent?: boolean; side_effects?: boolean };
  key?: SigningKey;
}

const DEFAULT_CODE = `import { defineExecutor, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run(args) { return ok({ echo: args }); } });
`;

const DEFAULT_SCHEMA = {
  definitions: {
    Input: { type: 'object' },
    Output: { type: 'object' },
  },
};

/**
 * Writes and signs a small executor for tests. Returns its folder and the key
 * that signed it (a fresh one unless given).
 *
 * @example
 * const { dir, key } = await writeSignedExecutor({ root, name: 'echo' });
 */
export async function writeSignedExecutor(
  options: ExecutorFixtureOptions,
): Promise<{ dir: string; key: SigningKey }> {
  const version = options.version ?? '1.0.0';
  const dir = options.versioned
    ? join(options.root, options.name, version)
    : join(options.root, options.name);
  await mkdir(dir, { recursive: true });
  let manifest = scaffoldManifest(options.name, `Test executor ${options.name}.`, '2026-01-01T00:00:00Z')
    .replace('version = "0.1.0"', `version = "${version}"`)
    .replace(
      'error_classes = ["BadName"]',
      `error_classes = ${JSON.stringify(options.errorClasses ?? ['Failed'])}`,
    )
    .replace('idempotent = true', `idempotent = ${options.contract?.idempotent ?? true}`)
    .replace('side_effects = false', `side_effects = ${options.contract?.side_effects ?? false}`)
    .replace('min_tier = "full"', 'min_tier = "none"')
    // test executors stand in for seeds: they enter the lifecycle as seed, then active
    .replace('created_by = "user"', 'created_by = "seed"');
  if (options.sandboxToml !== undefined) {
    manifest = manifest.replace(/\[sandbox\][\s\S]*?(?=\[audit\])/, `${options.sandboxToml.trim()}\n\n`);
  }
  await writeFile(join(dir, 'manifest.toml'), manifest);
  await writeFile(join(dir, 'main.ts'), options.code ?? DEFAULT_CODE);
  await writeFile(join(dir, 'schema.json'), JSON.stringify(options.schema ?? DEFAULT_SCHEMA, null, 2));
  const key = options.key ?? (await generateSigningKey());
  await signExecutor(dir, key);
  return { dir, key };
}
