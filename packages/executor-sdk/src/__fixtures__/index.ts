// Shared helpers for the SDK's own tests: temp folders that are removed after
// the file's tests, byte flips that can be undone, and small executor sources.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { afterAll, beforeAll } from 'vitest';
import { generateSigningKey, type PublicKey } from '../keys.ts';
import { claimedStatement, type SignatureFile, statementBytes } from '../signature.ts';

/**
 * Creates temp folders for one test file and removes them after its tests.
 * Also points `METNOS_CONFIG_DIR` at a private folder for the whole file, so
 * nothing a test does can reach the user's `~/.config/metnos`.
 */
export function useTempDirs(prefix = 'metnos-sdk-test-') {
  const made: string[] = [];
  const previousConfig = process.env.METNOS_CONFIG_DIR;
  beforeAll(async () => {
    process.env.METNOS_CONFIG_DIR = await make('config-');
  });
  afterAll(async () => {
    if (previousConfig === undefined) delete process.env.METNOS_CONFIG_DIR;
    else process.env.METNOS_CONFIG_DIR = previousConfig;
    await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
  });
  async function make(label = ''): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), `${prefix}${label}`));
    made.push(dir);
    return dir;
  }
  return {
    make,
    /** A fresh config dir, also exported as `METNOS_CONFIG_DIR` for code that reads the default. */
    async config(): Promise<string> {
      const configDir = await make('config-');
      process.env.METNOS_CONFIG_DIR = configDir;
      return configDir;
    },
  };
}

/** Rewrites a text file through `change`, as a person editing it by hand would. */
export async function editFile(path: string, change: (text: string) => string): Promise<void> {
  await writeFile(path, change(await readFile(path, 'utf8')));
}

/** XORs one byte of a file with `mask`; returns a function that restores the original bytes. */
export async function flipByte(path: string, index: number, mask = 0x01): Promise<() => Promise<void>> {
  const original = await readFile(path);
  const changed = Buffer.from(original);
  changed[index] = changed[index]! ^ mask;
  await writeFile(path, changed);
  return () => writeFile(path, original);
}

/** A `[sandbox]` section for {@link writeSignedExecutor}'s `sandboxToml` option. */
export function sandboxToml(
  settings: { maxDurationMs?: number; maxOutputBytes?: number; minTier?: string; profile?: string } = {},
) {
  return `[sandbox]
profile = "${settings.profile ?? 'test'}"
min_tier = "${settings.minTier ?? 'none'}"
max_duration_ms = ${settings.maxDurationMs ?? 30_000}
max_memory_mb = 128
max_output_bytes = ${settings.maxOutputBytes ?? 65_536}

[sandbox.fs]
read = ["$WORKSPACE"]
write = []
`;
}

/** The source of a code file whose `run` body is `body` (a function body taking `args`, `ctx`). */
export function executorCode(body: string, header = ''): string {
  return `${header}
import { defineExecutor, fail, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({
  async run(args: any, ctx: any) {
    ${body}
  },
});
`;
}

/**
 * Rewrites `manifest.sig` in `dir` with a signature by a fresh attacker key
 * that claims to be `trusted`. `change` may edit the file's fields first.
 */
export async function forgeSignature(
  dir: string,
  trusted: PublicKey,
  change: (file: SignatureFile) => void | Promise<void> = () => {},
): Promise<void> {
  const attacker = await generateSigningKey();
  const file = JSON.parse(await readFile(join(dir, 'manifest.sig'), 'utf8')) as SignatureFile;
  await change(file);
  file.key_id = trusted.keyId;
  file.signature = Buffer.from(
    ed25519.sign(statementBytes(claimedStatement(file)), attacker.secretKey),
  ).toString('base64');
  await writeFile(join(dir, 'manifest.sig'), JSON.stringify(file, null, 2));
}

/**
 * A small seeded generator (mulberry32), so every run of a test sees the same cases and a
 * failing one comes back on the next run.
 */
export function seededRandom(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), state | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
  const below = (count: number) => Math.floor(next() * count);
  return {
    next,
    below,
    pick: <T>(items: readonly T[]): T => items[below(items.length)]!,
    bytes: (length: number) => Uint8Array.from({ length }, () => below(256)),
  };
}
