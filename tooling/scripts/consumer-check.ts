// The packages as a stranger meets them. Builds and packs every public package, creates
// a project outside the repository, installs the tarballs there with npm (no workspace
// links), then:
//   1. typechecks tooling/consumer/src against them: strict, skipLibCheck: false, and a
//      negative test (src/negative-types.ts) that must not compile;
//   2. runs tooling/consumer/src/main.ts with Node 24: each package's README example
//      against the real seed executors and the real sandbox;
//   3. runs the installed `metnos` binary: --version, init, a sandboxed executor run.
// Usage: pnpm check:consumer [--keep]   (--keep leaves the project; a failure always does)
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildAll,
  copySeeds,
  type PackedPackage,
  packAll,
  REPO,
  run,
  runOrThrow,
  seconds,
} from './packages.ts';

/**
 * drizzle-orm's own declaration files do not typecheck with skipLibCheck: false
 * (members stripped as internal, mysql2 types it does not depend on): upstream
 * drizzle-team/drizzle-orm#5187. Errors inside them are counted and shown, never
 * hidden; an error anywhere else fails the check.
 */
const UPSTREAM_TYPE_ERRORS = { prefix: 'node_modules/drizzle-orm/', issue: 'drizzle-team/drizzle-orm#5187' };

async function stage<T>(
  name: string,
  work: () => Promise<T>,
  detail: (value: T) => string = () => '',
): Promise<T> {
  const start = performance.now();
  const value = await work();
  const said = detail(value);
  console.log(`${name.padEnd(10)} ${seconds(start).padStart(7)}${said ? `  ${said}` : ''}`);
  return value;
}

/** package.json of the consumer: the tarballs, and TypeScript at the repository's own versions. */
async function consumerManifest(packages: PackedPackage[]): Promise<string> {
  const root = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8'));
  const manifest = {
    name: 'metnos-consumer',
    private: true,
    type: 'module',
    dependencies: Object.fromEntries(
      packages.map((pkg) => [pkg.name, `file:tarballs/${pkg.tarball.split('/').at(-1)}`]),
    ),
    devDependencies: {
      '@types/node': root.devDependencies['@types/node'],
      typescript: root.devDependencies.typescript,
    },
    // the packages' ranges on each other ("0.1.0") resolve to these tarballs, never to the registry
    overrides: Object.fromEntries(packages.map((pkg) => [pkg.name, `$${pkg.name}`])),
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

async function createProject(project: string, packages: PackedPackage[]): Promise<string[]> {
  await cp(join(REPO, 'tooling', 'consumer'), project, { recursive: true });
  await writeFile(join(project, 'package.json'), await consumerManifest(packages));
  // npm runs install scripts; onnxruntime-node's would only download optional GPU
  // providers (its CPU runtime is in the package), so a consumer turns it off like this
  await writeFile(join(project, '.npmrc'), 'onnxruntime-node-install=skip\n');
  return copySeeds(join(project, 'executors'), join(project, 'keys', 'metnos-release.pub'));
}

/** tsc over the consumer's sources; throws on any error outside drizzle-orm's own files. */
async function typecheck(project: string): Promise<string> {
  const tsc = join(project, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = await run(process.execPath, [tsc, '-p', project, '--pretty', 'false'], { cwd: project });
  const errors = result.output.split('\n').filter((line) => /^\S.*: error TS\d+:/.test(line));
  const upstream = errors.filter((line) => line.startsWith(UPSTREAM_TYPE_ERRORS.prefix));
  const ours = errors.filter((line) => !line.startsWith(UPSTREAM_TYPE_ERRORS.prefix));
  if (ours.length > 0 || (result.code !== 0 && errors.length === 0)) {
    throw new Error(`tsc, outside drizzle-orm's own files:\n${ours.join('\n') || result.output}`);
  }
  const note =
    upstream.length > 0
      ? `; ${upstream.length} inside drizzle-orm's own .d.ts (${UPSTREAM_TYPE_ERRORS.issue})`
      : '';
  return `strict, skipLibCheck: false, negative-types.ts refused: 0 errors in our code and types${note}`;
}

/** The installed `metnos` binary: its version, `init`, and one sandboxed executor run in that workspace. */
async function runCli(project: string, env: NodeJS.ProcessEnv): Promise<string> {
  const metnos = join(project, 'node_modules', '.bin', 'metnos');
  const workspaceDir = join(project, 'cli-workspace');
  const version = (await runOrThrow(metnos, ['--version'], { cwd: project, env })).trim();
  await runOrThrow(metnos, ['init', workspaceDir, '--no-key'], { cwd: project, env });
  await writeFile(join(workspaceDir, 'workspace', 'notes.md'), 'alpha\nbeta\n');
  const args = JSON.stringify({ path: 'notes.md', mode: 'tail', lines: 1 });
  const output = await runOrThrow(metnos, ['executor', 'run', 'fs_read', '--args', args], {
    cwd: workspaceDir,
    env,
  });
  const result = JSON.parse(output) as { ok: boolean; content?: { content?: string } };
  if (!result.ok || result.content?.content !== 'beta\n')
    throw new Error(`metnos executor run fs_read: ${output}`);
  return `${version}; init, then executor run fs_read through the sandbox`;
}

const keep = process.argv.includes('--keep');
const started = performance.now();
const project = await mkdtemp(join(tmpdir(), 'metnos-consumer-'));
// npm and the consumer see none of the settings pnpm passes to this script.
const installEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !/^(npm_|INIT_CWD$)/.test(name)),
);
// What the consumer runs keeps its keys, state, caches and audit inside the project.
const home = join(project, 'home');
const runEnv = Object.fromEntries([
  ...Object.entries(installEnv).filter(([name]) => !/^(XDG_|METNOS_)/.test(name)),
  ['HOME', home],
]);

let failed = false;
try {
  await stage('build', buildAll);
  const packages = await stage(
    'pack',
    () => packAll(join(project, 'tarballs')),
    (packed) => `${packed.length} tarballs`,
  );
  await stage(
    'project',
    () => createProject(project, packages),
    (seeds) => `${project} (${seeds.length} seeds)`,
  );
  await mkdir(home, { recursive: true });
  const npmArgs = ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];
  await stage(
    'install',
    () => runOrThrow('npm', npmArgs, { cwd: project, env: installEnv }),
    () => 'npm install of the tarballs',
  );
  await stage('typecheck', () => typecheck(project), String);
  const output = await stage('run', () =>
    runOrThrow(process.execPath, ['--disable-warning=ExperimentalWarning', 'src/main.ts'], {
      cwd: project,
      env: runEnv,
    }),
  );
  process.stdout.write(output.replace(/^(?=.)/gm, '             '));
  await stage('cli', () => runCli(project, runEnv), String);
} catch (error) {
  failed = true;
  console.error(`\n${(error as Error).message}`);
}

console.log(`check:consumer ${failed ? 'FAILED' : 'passed'} in ${seconds(started)}`);
if (failed || keep) console.log(`project kept in ${project}`);
else await rm(project, { recursive: true, force: true });
process.exitCode = failed ? 1 : 0;
