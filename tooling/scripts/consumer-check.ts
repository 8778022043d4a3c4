// The packages as a stranger meets them. Builds and packs every public package, creates
// a project outside the repository, installs the tarballs there with npm (no workspace
// links), then:
//   1. typechecks tooling/consumer/src and every entry of every package's `exports` against
//      them: strict, skipLibCheck: false, no error anywhere (drizzle-orm's declarations included),
//      no drizzle-orm declaration loaded at all, and a negative test (src/negative-types.ts)
//      that must not compile;
//   2. runs tooling/consumer/src/main.ts with Node 24: each package's README example
//      against the real seed executors and the real sandbox;
//   3. runs the installed `metnos` binary: --version, init, a sandboxed executor run, ask, and
//      serve (one turn over HTTP with the token init made, then SIGTERM and exit 0).
// Usage: pnpm check:consumer [--keep]   (--keep leaves the project; a failure always does)
import { spawn } from 'node:child_process';
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
 * Modules our public declarations must never name. drizzle-orm's own declaration files
 * do not typecheck with skipLibCheck: false (drizzle-team/drizzle-orm#5187), so the
 * packages keep their drizzle tables private and declare their row types by hand. A
 * declaration that names one of these again fails the check by that alone, whether or
 * not the module's own declarations then report errors.
 */
const PRIVATE_TYPES = ['drizzle-orm'];

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

/**
 * `src/public-entries.ts`: a type-only import of every entry the installed packages'
 * `exports` declare types for, so tsc checks the declarations of entries the example
 * never imports (`@metnos/autopath/test`, `@metnos/sandbox/birth`, …) too.
 */
async function writePublicEntries(project: string, packages: PackedPackage[]): Promise<string[]> {
  const specifiers: string[] = [];
  for (const pkg of packages) {
    const manifest = JSON.parse(
      await readFile(join(project, 'node_modules', pkg.name, 'package.json'), 'utf8'),
    ) as { exports?: Record<string, unknown> };
    for (const [entry, target] of Object.entries(manifest.exports ?? {})) {
      if (typeof target === 'object' && target !== null && 'types' in target)
        specifiers.push(entry === '.' ? pkg.name : `${pkg.name}/${entry.slice(2)}`);
    }
  }
  const lines = specifiers.map((specifier, index) => `import type * as entry${index} from '${specifier}';`);
  await writeFile(
    join(project, 'src', 'public-entries.ts'),
    `// Written by consumer-check.ts: every public entry, for tsc to check.\n${lines.join('\n')}\n`,
  );
  return specifiers;
}

/** tsc over the consumer's sources and every public entry; throws on any error or a private module loaded. */
async function typecheck(project: string, packages: PackedPackage[]): Promise<string> {
  const entries = await writePublicEntries(project, packages);
  const tsc = join(project, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = await run(process.execPath, [tsc, '-p', project, '--pretty', 'false', '--listFiles'], {
    cwd: project,
  });
  const lines = result.output.split('\n');
  const errors = lines.filter((line) => /^\S.*: error TS\d+:/.test(line));
  if (errors.length > 0 || result.code !== 0) {
    throw new Error(`tsc: ${errors.length} errors\n${errors.join('\n') || result.output}`);
  }
  const loaded = lines.filter((line) => line.endsWith('.ts'));
  const leaked = loaded.filter((file) =>
    PRIVATE_TYPES.some((name) => file.includes(`/node_modules/${name}/`)),
  );
  if (leaked.length > 0) {
    throw new Error(
      `tsc loaded ${leaked.length} declaration files of ${PRIVATE_TYPES.join(', ')}, which our public ` +
        `declarations must not name; first: ${leaked[0]} (tsc --explainFiles says which import)`,
    );
  }
  return (
    `strict, skipLibCheck: false, ${entries.length} public entries, ${loaded.length} files: 0 errors, ` +
    `no ${PRIVATE_TYPES.join(', ')} declarations loaded; negative-types.ts refused`
  );
}

/**
 * The installed `metnos` binary, as a new user meets it: its version, `init` (with a key), one
 * sandboxed seed run, then the author flow (new, sign, test, run by name), one `ask` and one
 * `serve`, all from the workspace folder outside the checkout.
 */
async function runCli(project: string, env: NodeJS.ProcessEnv, home: string): Promise<string> {
  const metnos = join(project, 'node_modules', '.bin', 'metnos');
  const workspaceDir = join(project, 'cli-workspace');
  const version = (await runOrThrow(metnos, ['--version'], { cwd: project, env })).trim();
  await runOrThrow(metnos, ['init', workspaceDir], { cwd: project, env });
  await writeFile(join(workspaceDir, 'workspace', 'notes.md'), 'alpha\nbeta\n');
  const args = JSON.stringify({ path: 'notes.md', mode: 'tail', lines: 1 });
  const output = await runOrThrow(metnos, ['executor', 'run', 'fs_read', '--args', args], {
    cwd: workspaceDir,
    env,
  });
  const result = JSON.parse(output) as { ok: boolean; content?: { content?: string } };
  if (!result.ok || result.content?.content !== 'beta\n')
    throw new Error(`metnos executor run fs_read: ${output}`);
  const inWorkspace = { cwd: workspaceDir, env };
  await runOrThrow(metnos, ['executor', 'new', 'hello'], inWorkspace);
  await runOrThrow(metnos, ['executor', 'sign', 'hello'], inWorkspace);
  await runOrThrow(metnos, ['executor', 'test', 'hello'], inWorkspace);
  const hello = JSON.parse(
    await runOrThrow(metnos, ['executor', 'run', 'hello', '--args', '{"name":"Ada"}'], inWorkspace),
  ) as { ok: boolean; content?: { greeting?: string } };
  if (!hello.ok || hello.content?.greeting !== 'Hello, Ada!')
    throw new Error(`metnos executor run hello: ${JSON.stringify(hello)}`);
  const answer = await runOrThrow(metnos, ['ask', 'what time is it?'], inWorkspace);
  if (!/^It is \d\d:\d\d/m.test(answer)) throw new Error(`metnos ask: ${answer}`);
  await serveOnce(metnos, inWorkspace, join(home, '.config', 'metnos', 'server.token'));
  return `${version}; init, executor run fs_read, new/sign/test/run hello, ask, serve: all from the workspace`;
}

/**
 * `metnos serve --port 0` from the installed package: the URL it prints, one turn through the API
 * with the token init made (401 without it), then SIGTERM and exit 0.
 */
async function serveOnce(
  metnos: string,
  options: { cwd: string; env: NodeJS.ProcessEnv },
  tokenFile: string,
) {
  const child = spawn(metnos, ['serve', '--port', '0'], { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  try {
    const deadline = Date.now() + 30_000;
    const listening = () => /listening on (http:\/\/\S+)/.exec(output)?.[1];
    while (!listening()) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`metnos serve: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const url = listening();
    const token = (await readFile(tokenFile, 'utf8')).trim();
    if ((await fetch(`${url}/api/health`)).status !== 401)
      throw new Error('metnos serve: no 401 without the token');
    const turn = await fetch(`${url}/api/turns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ request: 'what time is it?' }),
    });
    const body = (await turn.json()) as { finalMessage?: string };
    if (turn.status !== 200 || !/^It is \d\d:\d\d/.test(body.finalMessage ?? ''))
      throw new Error(`metnos serve: POST /api/turns ${turn.status} ${JSON.stringify(body)}`);
    child.kill('SIGTERM');
    const code = await exited;
    if (code !== 0) throw new Error(`metnos serve exited ${code} on SIGTERM:\n${output}`);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
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
  await stage('typecheck', () => typecheck(project, packages), String);
  const output = await stage('run', () =>
    runOrThrow(process.execPath, ['--disable-warning=ExperimentalWarning', 'src/main.ts'], {
      cwd: project,
      env: runEnv,
    }),
  );
  process.stdout.write(output.replace(/^(?=.)/gm, '             '));
  await stage('cli', () => runCli(project, runEnv, home), String);
} catch (error) {
  failed = true;
  console.error(`\n${(error as Error).message}`);
}

console.log(`check:consumer ${failed ? 'FAILED' : 'passed'} in ${seconds(started)}`);
if (failed || keep) console.log(`project kept in ${project}`);
else await rm(project, { recursive: true, force: true });
process.exitCode = failed ? 1 : 0;
