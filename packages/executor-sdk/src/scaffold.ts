import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MetnosError } from './errors.ts';

/** Options of {@link scaffoldExecutor}. */
export interface ScaffoldOptions {
  /** Where the executor folder is created (`<parent>/<name>`). */
  parent: string;
  name: string;
  summary?: string;
  clock?: () => Date;
}

/** The manifest text of a fresh executor. */
export function scaffoldManifest(name: string, summary: string, createdAt: string): string {
  return `[executor]
name = "${name}"
version = "0.1.0"
created_at = ${createdAt}
created_by = "user"
summary = "${summary.replaceAll('"', '\\"')}"
affinity = ["${name.split('_').join('", "')}"]
capabilities = []
entry = "main.ts"

[contract]
input_schema = "schema.json#/definitions/Input"
output_schema = "schema.json#/definitions/Output"
error_classes = ["BadName"]
idempotent = true
side_effects = false

[sandbox]
profile = "no-io"
min_tier = "full"
max_duration_ms = 2000
max_memory_mb = 128
max_output_bytes = 65536

[sandbox.fs]
read = []
write = []

[sandbox.exec]
mode = "none"

[sandbox.network]
mode = "none"

[audit]
trace_topic = "executor.${name}"
`;
}

const CODE = `import { defineExecutor, fail, ok } from '@metnos/executor-sdk/define';

interface Args {
  name: string;
}

export default defineExecutor<Args, { greeting: string }>({
  run(args) {
    if (args.name.trim() === '') return fail('BadName', 'name is empty');
    return ok({ greeting: \`Hello, \${args.name}!\` });
  },
});
`;

const SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  definitions: {
    Input: {
      type: 'object',
      properties: { name: { type: 'string', description: 'Who to greet', maxLength: 200 } },
      required: ['name'],
      additionalProperties: false,
    },
    Output: {
      type: 'object',
      properties: { greeting: { type: 'string' } },
      required: ['greeting'],
      additionalProperties: false,
    },
  },
};

const TEST = `import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { birth } from '@metnos/sandbox/birth';

const executor = birth(join(import.meta.dirname, '..'));

describe('birth', () => {
  it('greets by name', async () => {
    const result = await executor.invoke({ name: 'Ada' });
    expect(result).toMatchObject({ ok: true, content: { greeting: 'Hello, Ada!' } });
  });

  it('refuses an empty name with its error class', async () => {
    const result = await executor.invoke({ name: ' ' });
    expect(result).toMatchObject({ ok: false, error: { class: 'BadName' } });
  });
});
`;

/**
 * Writes a working, signable executor: manifest, code, schema and a birth
 * test. Sign it with `signExecutor` (or `metnos executor sign`).
 *
 * @example
 * const dir = await scaffoldExecutor({ parent: 'executors', name: 'hello' });
 */
export async function scaffoldExecutor(options: ScaffoldOptions): Promise<string> {
  if (!/^[a-z][a-z0-9_]{1,63}$/.test(options.name)) {
    throw new MetnosError({
      code: 'invalid_name',
      message: `"${options.name}" is not a valid executor name (a-z, 0-9, _; starts with a letter)`,
    });
  }
  const dir = join(options.parent, options.name);
  const taken = await stat(dir).then(
    () => true,
    () => false,
  );
  if (taken) throw new MetnosError({ code: 'exists', message: `${dir} already exists` });
  const createdAt = (options.clock?.() ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  await mkdir(join(dir, 'tests'), { recursive: true });
  await writeFile(
    join(dir, 'manifest.toml'),
    scaffoldManifest(options.name, options.summary ?? `Greets someone by name.`, createdAt),
  );
  await writeFile(join(dir, 'main.ts'), CODE);
  await writeFile(join(dir, 'schema.json'), `${JSON.stringify(SCHEMA, null, 2)}\n`);
  await writeFile(join(dir, 'tests', 'birth.test.ts'), TEST);
  return dir;
}
