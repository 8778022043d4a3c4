import { describe, expect, it } from 'vitest';
import { ManifestError, MetnosError } from './errors.ts';
import { compareVersions, parseManifest } from './manifest.ts';
import { scaffoldManifest } from './scaffold.ts';

const FILE = 'executors/greet/manifest.toml';
const valid = scaffoldManifest('greet', 'Greets someone.', '2026-04-25T08:12:00Z');

function manifestError(text: string): ManifestError {
  try {
    parseManifest(text, FILE);
  } catch (error) {
    if (ManifestError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('the manifest was accepted');
}

describe('parseManifest', () => {
  it('reads a scaffolded manifest and fills the defaults', () => {
    const manifest = parseManifest(valid, FILE);
    expect(manifest.executor).toMatchObject({
      name: 'greet',
      version: '0.1.0',
      entry: 'main.ts',
      created_by: 'user',
    });
    expect(manifest.executor.created_at).toBe('2026-04-25T08:12:00.000Z');
    expect(manifest.sandbox).toMatchObject({
      min_tier: 'full',
      fs: { read: [], write: [] },
      exec: { mode: 'none', binaries: [] },
    });
    expect(manifest.contract.error_classes).toEqual(['BadName']);
  });

  // Each broken manifest is refused with a message naming the file, the field and what was expected.
  const cases: Array<{ label: string; text: string; field: string | RegExp; expected: RegExp }> = [
    {
      label: 'a TOML syntax error',
      text: valid.replace('idempotent = true', 'idempotent = = true'),
      field: /^\(syntax, line \d+\)$/,
      expected: /^valid TOML/,
    },
    {
      label: 'an unterminated string',
      text: valid.replace('summary = "Greets someone."', 'summary = "Greets someone.'),
      field: /^\(syntax/,
      expected: /^valid TOML/,
    },
    {
      label: 'a missing field',
      text: valid.replace(/^summary = .*\n/m, ''),
      field: 'executor.summary',
      expected: /string/,
    },
    {
      label: 'a missing table',
      text: valid.replace(/\[audit\][\s\S]*$/, ''),
      field: 'audit',
      expected: /object/,
    },
    {
      label: 'a number written as a string',
      text: valid.replace('max_duration_ms = 2000', 'max_duration_ms = "2000"'),
      field: 'sandbox.max_duration_ms',
      expected: /number/,
    },
    {
      label: 'a boolean written as a string',
      text: valid.replace('idempotent = true', 'idempotent = "yes"'),
      field: 'contract.idempotent',
      expected: /boolean/,
    },
    {
      label: 'an unknown key in [executor]',
      text: valid.replace('entry = "main.ts"', 'entry = "main.ts"\ncolour = "red"'),
      field: /^executor(\.colour)?$/,
      expected: /unknown key.*colour/,
    },
    {
      label: 'an unknown key in [sandbox]',
      text: valid.replace('max_memory_mb = 128', 'max_memory_mb = 128\nmax_cpu = 2'),
      field: /^sandbox(\.max_cpu)?$/,
      expected: /unknown key.*max_cpu/,
    },
    {
      label: 'an unknown key in [sandbox.network]',
      text: valid.replace(
        '[sandbox.network]\nmode = "none"',
        '[sandbox.network]\nmode = "none"\nproxy = "x"',
      ),
      field: /^sandbox\.network(\.proxy)?$/,
      expected: /unknown key.*proxy/,
    },
    {
      label: 'an unknown table',
      text: `${valid}\n[extras]\nfoo = 1\n`,
      field: /^\(root\)$|^extras$/,
      expected: /unknown key.*extras/,
    },
    {
      label: 'a version that is not semver',
      text: valid.replace('version = "0.1.0"', 'version = "1.0"'),
      field: 'executor.version',
      expected: /semantic version such as "1\.0\.0"/,
    },
    {
      label: 'a version with a leading zero',
      text: valid.replace('version = "0.1.0"', 'version = "01.0.0"'),
      field: 'executor.version',
      expected: /semantic version/,
    },
    {
      label: 'a name with capitals and a dash',
      text: valid.replace('name = "greet"', 'name = "Greet-Me"'),
      field: 'executor.name',
      expected: /lowercase identifier/,
    },
    {
      label: 'a relative path in the profile',
      text: valid.replace('read = []', 'read = ["notes"]'),
      field: 'sandbox.fs.read.0',
      expected: /absolute path or one starting with \$WORKSPACE/,
    },
    {
      label: 'an unknown isolation tier',
      text: valid.replace('min_tier = "full"', 'min_tier = "max"'),
      field: 'sandbox.min_tier',
      expected: /^one of "none", "basic", "standard", "full"$/,
    },
    {
      label: 'a schema reference outside schema.json',
      text: valid.replace(
        'input_schema = "schema.json#/definitions/Input"',
        'input_schema = "other.json#/Input"',
      ),
      field: 'contract.input_schema',
      expected: /schema\.json#\/definitions\/Input/,
    },
    {
      label: 'a timestamp that is not a date',
      text: valid.replace('created_at = 2026-04-25T08:12:00Z', 'created_at = "yesterday"'),
      field: 'executor.created_at',
      expected: /RFC 3339/,
    },
    {
      label: 'a lower-case error class',
      text: valid.replace('error_classes = ["BadName"]', 'error_classes = ["bad_name"]'),
      field: 'contract.error_classes.0',
      expected: /PascalCase/,
    },
  ];

  for (const { label, text, field, expected } of cases) {
    it(`refuses ${label}, naming the file, the field and what was expected`, () => {
      const error = manifestError(text);
      expect(MetnosError.isInstance(error)).toBe(true);
      expect(error.code).toBe('manifest_invalid');
      expect(error.file).toBe(FILE);
      if (typeof field === 'string') expect(error.field).toBe(field);
      else expect(error.field).toMatch(field);
      expect(error.expected).toMatch(expected);
      expect(error.message).toBe(`${FILE}: field "${error.field}": expected ${error.expected}`);
    });
  }
});

describe('compareVersions', () => {
  const ascending = [
    '0.0.1',
    '0.1.0',
    '1.0.0-alpha',
    '1.0.0-alpha.1',
    '1.0.0-alpha.2',
    '1.0.0-alpha.10',
    '1.0.0-alpha.beta',
    '1.0.0-beta',
    '1.0.0-rc.1',
    '1.0.0',
    '1.0.1',
    '1.2.0',
    '1.10.0',
    '2.0.0',
    '10.0.0',
  ];

  it('orders versions by semver precedence, numeric parts as numbers', () => {
    for (let low = 0; low < ascending.length; low++) {
      for (let high = 0; high < ascending.length; high++) {
        expect([ascending[low], ascending[high], compareVersions(ascending[low]!, ascending[high]!)]).toEqual(
          [ascending[low], ascending[high], Math.sign(low - high)],
        );
      }
    }
  });

  it('ignores build metadata', () => {
    expect(compareVersions('1.0.0+build.5', '1.0.0+build.7')).toBe(0);
    expect(compareVersions('1.0.0+build.5', '1.0.0')).toBe(0);
  });
});
