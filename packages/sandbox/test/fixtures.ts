import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createBirthHarness,
  type ExecutorRunner,
  generateSigningKey,
  type PublicKey,
  type SigningKey,
  serializePublicKey,
  signExecutor,
} from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';

/** Writes `<root>/metnos.toml` trusting `key`, so the birth harness finds it. */
export async function trustKeyIn(root: string, key: PublicKey): Promise<void> {
  await writeFile(join(root, 'test.pub'), serializePublicKey(key));
  await writeFile(
    join(root, 'metnos.toml'),
    '[workspace]\nroot = "workspace"\nexecutors = "."\ntrusted_keys = ["test.pub"]\n',
  );
}

/** A test profile; omitted fields are the tightest. */
export interface ProfileSpec {
  read?: string[];
  write?: string[];
  exec?: string[];
  domains?: string[];
  durationMs?: number;
  memoryMb?: number;
  outputBytes?: number;
  tier?: 'none' | 'basic' | 'standard' | 'full';
}

/** The `[sandbox]` TOML for {@link ProfileSpec}. */
export function sandboxToml(spec: ProfileSpec = {}): string {
  const list = (values: string[] = []) => JSON.stringify(values);
  return `[sandbox]
profile = "test"
min_tier = "${spec.tier ?? 'full'}"
max_duration_ms = ${spec.durationMs ?? 4000}
max_memory_mb = ${spec.memoryMb ?? 128}
max_output_bytes = ${spec.outputBytes ?? 65536}

[sandbox.fs]
read = ${list(spec.read)}
write = ${list(spec.write)}

[sandbox.exec]
mode = "${spec.exec?.length ? 'allowlist' : 'none'}"
binaries = ${list(spec.exec)}

[sandbox.network]
mode = "${spec.domains?.length ? 'allowlist' : 'none'}"
domains = ${list(spec.domains)}
`;
}

/**
 * Hostile (or plain) code: `body` runs inside `run(args, ctx)` with `fs`,
 * `net`, `cp` (child_process), `dns`, `dgram` and `os` in scope and returns
 * the value of `out`, so a test reads what the code observed.
 */
export function observingCode(body: string): string {
  return `import { defineExecutor, ok } from '@metnos/executor-sdk/define';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as cp from 'node:child_process';
import * as dns from 'node:dns/promises';
import * as dgram from 'node:dgram';
import * as os from 'node:os';
const attempt = async (fn) => { try { const value = await fn(); return { ok: true, value: typeof value === 'string' ? value.slice(0, 2000) : value }; } catch (error) { return { ok: false, code: error?.code ?? String(error?.message ?? error).slice(0, 200) }; } };
export default defineExecutor({ async run(args, ctx) {
  const out = {};
  ${body}
  return ok(out);
} });
`;
}

/** A lab: one signing key, executors each in their own folder, harnesses bound to one runner. */
export interface Lab {
  root: string;
  key: SigningKey;
  /** Writes, signs and wraps an executor; `capabilities` edits the manifest before signing. */
  executor(
    name: string,
    options: {
      code?: string;
      profile?: ProfileSpec;
      capabilities?: string[];
      schema?: Record<string, unknown>;
    },
    runner: ExecutorRunner,
  ): Promise<ReturnType<typeof createBirthHarness>>;
}

/** Creates a {@link Lab} under a fresh temp folder. */
export async function createLab(prefix = 'metnos-sandbox-lab-'): Promise<Lab> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  const key = await generateSigningKey();
  return {
    root,
    key,
    async executor(name, options, runner) {
      const parent = join(root, name);
      await mkdir(parent, { recursive: true });
      const { dir } = await writeSignedExecutor({
        root: parent,
        name,
        key,
        code: options.code,
        schema: options.schema,
        sandboxToml: sandboxToml(options.profile),
      });
      if (options.capabilities) {
        const { readFile } = await import('node:fs/promises');
        const manifest = await readFile(join(dir, 'manifest.toml'), 'utf8');
        await writeFile(
          join(dir, 'manifest.toml'),
          manifest.replace('capabilities = []', `capabilities = ${JSON.stringify(options.capabilities)}`),
        );
        await signExecutor(dir, key);
      }
      return createBirthHarness(dir, { runner, trustedKeys: [key] });
    },
  };
}
