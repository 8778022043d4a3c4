import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseManifest } from '@metnos/executor-sdk';
import type { BirthCase, Specification } from './spec-schema.ts';
import type { Artefacts, Grants } from './types.ts';

/** TOML basic string (JSON's escapes are TOML's). */
const tomlString = (text: string) => JSON.stringify(text);
const tomlList = (items: readonly string[]) => `[${items.map(tomlString).join(', ')}]`;

/** The capabilities a set of grants amounts to, for the manifest and the vaglio. */
function capabilitiesOf(grants: Grants): string[] {
  return [
    ...(grants.read.length > 0 ? ['fs:read'] : []),
    ...(grants.write.length > 0 ? ['fs:write'] : []),
    ...(grants.domains.length > 0 ? ['net:http'] : []),
  ];
}

/**
 * The manifest of a synthesised executor: the spec's identity and contract,
 * `created_by = "synt:<run id>"`, the given grants as its profile (tier
 * `full`, no exec, ever). Checked with the SDK's own manifest parser before
 * it is returned.
 *
 * @example
 * renderManifest(spec, { read: [], write: [], domains: [] }, { runId: 'r-1a2b3c4d', createdAt: new Date() });
 */
export function renderManifest(
  spec: Specification,
  grants: Grants,
  origin: { runId: string; createdAt: Date },
): string {
  const createdAt = origin.createdAt.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const text = `[executor]
name = ${tomlString(spec.name)}
version = "1.0.0"
created_at = ${createdAt}
created_by = ${tomlString(`synt:${origin.runId}`)}
summary = ${tomlString(spec.summary)}
affinity = ${tomlList(spec.affinity)}
capabilities = ${tomlList(capabilitiesOf(grants))}
entry = "main.ts"

[contract]
input_schema = "schema.json#/definitions/Input"
output_schema = "schema.json#/definitions/Output"
error_classes = ${tomlList(spec.error_classes)}
idempotent = ${spec.idempotent}
side_effects = ${spec.side_effects}

[sandbox]
profile = ${tomlString(`synt-${spec.name}`)}
min_tier = "full"
max_duration_ms = ${spec.profile.max_duration_ms}
max_memory_mb = ${spec.profile.max_memory_mb}
max_output_bytes = 1048576

[sandbox.fs]
read = ${tomlList(grants.read)}
write = ${tomlList(grants.write)}

[sandbox.exec]
mode = "none"

[sandbox.network]
mode = ${grants.domains.length > 0 ? '"allowlist"' : '"none"'}
domains = ${tomlList(grants.domains)}

[audit]
trace_topic = ${tomlString(`executor.${spec.name}`)}
`;
  parseManifest(text, 'manifest.toml');
  return text;
}

/** The birth test file a synthesised executor carries: its cases, run again through the sandbox. */
export function birthTestFile(name: string, runId: string): string {
  return `import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { birth } from '@metnos/sandbox/birth';
import { describe, expect, it } from 'vitest';

// Written by the synt (run ${runId}): these cases passed under this profile, in the sandbox, before
// the person approved and signed ${name}.
const executor = birth(join(import.meta.dirname, '..'));
const cases = JSON.parse(await readFile(join(import.meta.dirname, 'cases.json'), 'utf8'));

describe('${name} birth', () => {
  for (const test of cases) {
    it(test.name, async () => {
      const workspace = await mkdtemp(join(tmpdir(), 'metnos-birth-'));
      try {
        for (const [path, text] of Object.entries(test.files ?? {})) {
          await mkdir(dirname(join(workspace, path)), { recursive: true });
          await writeFile(join(workspace, path), String(text));
        }
        const result = await executor.invoke(test.args, { workspace });
        if (test.expect.ok)
          expect(result).toMatchObject(
            test.expect.content === undefined ? { ok: true } : { ok: true, content: test.expect.content },
          );
        else expect(result).toMatchObject({ ok: false, error: { class: test.expect.error_class } });
      } finally {
        await rm(workspace, { recursive: true, force: true });
      }
    });
  }
});
`;
}

/** Canonical JSON: keys sorted at every level, so equal artefacts give equal digests. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/**
 * The digest the person approves: SHA-256 over the artefacts exactly as they
 * will be written and signed. Install refuses artefacts whose digest is not
 * the approved one.
 *
 * @example
 * reviewDigest(artefacts); // 'sha256:9f2c…'
 */
export function reviewDigest(artefacts: Artefacts): string {
  return `sha256:${createHash('sha256').update(canonical(artefacts)).digest('hex')}`;
}

/**
 * Writes an executor folder from artefacts: manifest, code, schema, and
 * `tests/` (the cases and the file that runs them). Not signed yet.
 */
export async function writeExecutorFolder(
  dir: string,
  artefacts: Artefacts,
  origin: { name: string; runId: string },
): Promise<void> {
  await mkdir(join(dir, 'tests'), { recursive: true });
  await writeFile(join(dir, 'manifest.toml'), artefacts.manifest);
  await writeFile(join(dir, 'main.ts'), artefacts.code);
  await writeFile(join(dir, 'schema.json'), artefacts.schema);
  await writeFile(join(dir, 'tests', 'cases.json'), `${JSON.stringify(artefacts.cases, null, 2)}\n`);
  await writeFile(join(dir, 'tests', 'birth.test.ts'), birthTestFile(origin.name, origin.runId));
}

/** Writes a birth case's files into its workspace. */
export async function writeCaseFiles(workspace: string, test: BirthCase): Promise<void> {
  for (const [path, text] of Object.entries(test.files)) {
    const target = join(workspace, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, text);
  }
}
