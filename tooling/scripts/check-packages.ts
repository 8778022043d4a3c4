// Builds and packs every public package, then checks each tarball the way a consumer
// would meet it: publint (strict), @arethetypeswrong/cli (--profile esm-only), and the
// manifest rules below. Usage: pnpm check:packages [--keep]  (--keep leaves the tarballs)
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { buildAll, type PackedPackage, packAll, REPO, run, runOrThrow, seconds } from './packages.ts';

/** Files a package cannot work without, beyond what its `exports` name. */
const REQUIRED_FILES: Record<string, string[]> = {
  '@metnos/executor-sdk': [
    'runtime/harness.mjs',
    'runtime/define.mjs',
    'runtime/json-schema.mjs',
    'runtime/telegram.mjs',
  ],
  '@metnos/sandbox': ['native/metnos-jail.c'],
  '@metnos/autopath': ['drizzle/meta/_journal.json'],
  '@metnos/planner': ['drizzle/meta/_journal.json'],
  '@metnos/mnestome': ['drizzle/meta/_journal.json'],
  '@metnos/synt': ['drizzle/meta/_journal.json'],
  '@metnos/cli': ['seeds/metnos-release.pub', 'seeds/fs_read/manifest.sig'],
  '@metnos/server': [
    'drizzle/meta/_journal.json',
    'console/index.html',
    'console/console.js',
    'console/proposals.js',
    'console/console.css',
  ],
};

const DEPENDENCY_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies', 'devDependencies'];
const BIN = join(REPO, 'node_modules', '.bin');

type Manifest = Record<string, unknown> & {
  name: string;
  exports?: unknown;
  bin?: Record<string, string>;
  engines?: { node?: string };
  publishConfig?: { exports?: unknown };
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};

/** `exports` without the repository's `metnos-source` condition: what the packed manifest must say. */
function withoutSourceCondition(exports: unknown): unknown {
  if (typeof exports !== 'object' || exports === null) return exports;
  return Object.fromEntries(
    Object.entries(exports)
      .filter(([key]) => key !== 'metnos-source')
      .map(([key, value]) => [key, withoutSourceCondition(value)]),
  );
}

/** Rules for the packed package.json and the file list. */
async function manifestProblems(pkg: PackedPackage, root: string, packed: Manifest): Promise<string[]> {
  const problems: string[] = [];
  for (const file of ['LICENSE', 'README.md', ...(REQUIRED_FILES[pkg.name] ?? [])]) {
    if (!pkg.files.includes(file)) problems.push(`${file} is not in the tarball`);
  }
  if (packed.engines?.node !== '>=24') problems.push('engines.node is not ">=24"');
  for (const field of DEPENDENCY_FIELDS) {
    for (const [name, range] of Object.entries((packed[field] ?? {}) as Record<string, string>)) {
      if (range.startsWith('workspace:')) problems.push(`${field}.${name} is still "${range}"`);
    }
  }
  if (JSON.stringify(packed.exports ?? {}).includes('metnos-source')) {
    problems.push('the packed exports still name the metnos-source condition (src/ is not published)');
  }
  const source = JSON.parse(await readFile(join(pkg.dir, 'package.json'), 'utf8')) as Manifest;
  const sourceExports = JSON.stringify(source.exports ?? {});
  const publishedExports = withoutSourceCondition(source.exports);
  if (
    sourceExports.includes('metnos-source') &&
    !isDeepStrictEqual(source.publishConfig?.exports, publishedExports)
  ) {
    problems.push('publishConfig.exports is not exports without metnos-source (edit both together)');
  }
  for (const [name, target] of Object.entries(packed.bin ?? {})) {
    const text = await readFile(join(root, target), 'utf8').catch(() => undefined);
    if (text === undefined) problems.push(`bin ${name}: ${target} is not in the tarball`);
    else if (!text.startsWith('#!/usr/bin/env node\n'))
      problems.push(`bin ${name}: ${target} lacks "#!/usr/bin/env node"`);
  }
  return problems;
}

/** The package a bare specifier names: `@scope/name/sub` → `@scope/name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/** `@scope/name` → `@types/scope__name`, `name` → `@types/name`. */
function typesPackageOf(name: string): string {
  return `@types/${name.startsWith('@') ? name.slice(1).replace('/', '__') : name}`;
}

/**
 * Bare modules a declaration file imports, references or re-exports (comments ignored).
 * Node's own types (`node:*`, a `types="node"` reference) are the consumer's `@types/node`.
 */
function importedModules(text: string): string[] {
  const references = [...text.matchAll(/^\/\/\/\s*<reference\s+types="([^"]+)"/gm)].map((match) => match[1]!);
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const patterns = [
    /\bfrom\s+['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /^\s*import\s+['"]([^'"]+)['"]/gm,
  ];
  const specifiers = patterns.flatMap((pattern) => [...code.matchAll(pattern)].map((match) => match[1]!));
  return [...references, ...specifiers].filter(
    (specifier) => !specifier.startsWith('.') && !isBuiltin(specifier) && specifier !== 'node',
  );
}

async function declarationFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && /\.d\.[cm]?ts$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Whether the copy of `name` the package was built against carries its own declarations. */
async function shipsOwnTypes(packageDir: string, name: string): Promise<boolean> {
  const dir = join(packageDir, 'node_modules', name);
  const manifest = await readFile(join(dir, 'package.json'), 'utf8').then(JSON.parse, () => undefined);
  if (!manifest) return false;
  if (manifest.types || manifest.typings || JSON.stringify(manifest.exports ?? {}).includes('"types"'))
    return true;
  return stat(join(dir, 'index.d.ts')).then(
    () => true,
    () => false,
  );
}

/**
 * A module the public types name must come with the package's dependencies:
 * itself when it carries its own declarations, else its `@types/` package. A
 * devDependency is not installed for a consumer, whose `tsc` then fails or,
 * with skipLibCheck, quietly turns the type into `any`.
 */
async function typeDependencyProblems(pkg: PackedPackage, root: string, packed: Manifest): Promise<string[]> {
  const declared = new Set([
    ...Object.keys(packed.dependencies ?? {}),
    ...Object.keys(packed.peerDependencies ?? {}),
  ]);
  const missing = new Map<string, string>();
  for (const file of await declarationFiles(root)) {
    for (const specifier of importedModules(await readFile(file, 'utf8'))) {
      const name = packageOf(specifier);
      if (name === packed.name || declared.has(typesPackageOf(name))) continue;
      if (declared.has(name) && (await shipsOwnTypes(pkg.dir, name))) continue;
      missing.set(name, file.slice(root.length + 1));
    }
  }
  return [...missing].map(
    ([name, file]) =>
      `${file} names "${name}": it must be a dependency with its own types, or ${typesPackageOf(name)} one`,
  );
}

async function checkTarball(pkg: PackedPackage, workDir: string): Promise<string[]> {
  const unpacked = join(workDir, pkg.name.replace('/', '__'));
  await mkdir(unpacked, { recursive: true });
  await runOrThrow('tar', ['-xzf', pkg.tarball, '-C', unpacked]);
  const root = join(unpacked, 'package');
  const packed = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as Manifest;
  const problems = [
    ...(await manifestProblems(pkg, root, packed)),
    ...(await typeDependencyProblems(pkg, root, packed)),
  ];
  const publint = await run(join(BIN, 'publint'), ['run', '--strict', pkg.tarball]);
  if (publint.code !== 0 || !publint.output.includes('All good!'))
    problems.push(`publint:\n${publint.output}`);
  const attw = await run(join(BIN, 'attw'), [
    pkg.tarball,
    '--profile',
    'esm-only',
    '--format',
    'table-flipped',
    '--no-color',
  ]);
  if (attw.code !== 0) problems.push(`attw --profile esm-only:\n${attw.output}`);
  return problems;
}

const keep = process.argv.includes('--keep');
const started = performance.now();
let step = performance.now();
await buildAll();
console.log(`build: ${seconds(step)}`);

const workDir = await mkdtemp(join(tmpdir(), 'metnos-packages-'));
step = performance.now();
const packages = await packAll(workDir);
console.log(`pack: ${packages.length} tarballs in ${seconds(step)} → ${workDir}`);

let failed = 0;
for (const pkg of packages) {
  step = performance.now();
  const problems = await checkTarball(pkg, workDir);
  const label = `${pkg.name}@${pkg.version}`.padEnd(28);
  if (problems.length === 0) {
    console.log(
      `ok    ${label} ${String(pkg.files.length).padStart(3)} files · publint · attw esm-only · manifest · type deps  (${seconds(step)})`,
    );
  } else {
    failed++;
    console.log(`FAIL  ${label}\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  }
}
if (!keep) await rm(workDir, { recursive: true, force: true });
console.log(
  `${packages.length - failed} of ${packages.length} packages clean in ${seconds(started)}${keep ? ` (tarballs in ${workDir})` : ''}`,
);
process.exitCode = failed === 0 ? 0 : 1;
