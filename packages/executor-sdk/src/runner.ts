import { mkdtemp, rm } from 'node:fs/promises';
import * as moduleApi from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ChildReport, type ChildSpec, runChild } from './child-process.ts';
import { type ExpandedProfile, expandProfile, type InvocationContext, invalidAsOf } from './context.ts';
import { credentialView, type HostCredential } from './credentials.ts';
import { type IsolationTier, tierRank } from './profile.ts';
import { type ExecutorResult, failure, type IsolationRecord } from './result.ts';
import type { VerifiedExecutor } from './verify.ts';

/** The folder of the executor host runtime (harness, define module, validator). Sandboxes expose it read-only. */
export const RUNTIME_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'runtime');

/** The harness script every executor process starts with. */
export const HARNESS_PATH = join(RUNTIME_DIR, 'harness.mjs');

/** One call for a runner. */
export interface RunRequest {
  executor: VerifiedExecutor;
  args: unknown;
  context: InvocationContext;
  signal?: AbortSignal;
}

/** A runner's answer: the result plus what the audit line needs. */
export interface RunReport {
  result: ExecutorResult;
  durationMs: number;
  /** Raw bytes the process wrote as its result (empty when none ran). */
  stdout: string;
  /** `ok`, `error` (the executor failed), `policy` (refused before start), `crash`, `timeout`. */
  exit: 'ok' | 'error' | 'policy' | 'crash' | 'timeout';
}

/**
 * Runs a verified executor with its arguments. The plain runner here starts a
 * bare child process; `@metnos/sandbox` implements the same interface with
 * kernel isolation around the same harness.
 */
export interface ExecutorRunner {
  /** The strongest tier this runner applies on this host. */
  readonly tier: IsolationTier;
  run(request: RunRequest): Promise<RunReport>;
}

/** Stripped JavaScript by code digest: derived once per host process from verified bytes. */
const strippedByDigest = new Map<string, string>();
const STRIPPED_KEPT = 512;

/** Node's type stripper, loaded on first use (it loads a WebAssembly module: tens of ms, once). */
function stripTypes(source: string): string | undefined {
  const strip = (moduleApi as { stripTypeScriptTypes?: (code: string, options: object) => string })
    .stripTypeScriptTypes;
  if (typeof strip !== 'function') return undefined;
  // the API is marked experimental in Node 24; its one warning says nothing a person can act on
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if (String(warning).includes('stripTypeScriptTypes')) return;
    (emitWarning as (...values: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return strip(source, { mode: 'strip' });
  } catch {
    // syntax that needs a transform: the process is sent the source and reports it as today
    return undefined;
  } finally {
    process.emitWarning = emitWarning;
  }
}

/**
 * The code an executor process loads: for a TypeScript code file, JavaScript
 * derived on the host from the verified bytes with Node's own type stripper
 * (the same `strip` mode Node applies when it loads a `.ts` module, positions
 * kept, so stack traces still point into the signed source), so no process
 * pays for loading the stripper. The signed file stays the source of truth:
 * the derived form is never written anywhere, it is computed in this process
 * from bytes that matched the signature, keyed by their digest. Code the
 * stripper refuses is sent as it is, and the process reports the same error
 * as before.
 *
 * @example
 * const { code, format } = runnableCode(executor); // format 'module': types already stripped
 */
export function runnableCode(executor: Pick<VerifiedExecutor, 'code' | 'codeFile' | 'digests'>): {
  code: string;
  format: 'module' | 'module-typescript';
} {
  const source = executor.code.toString('utf8');
  if (!executor.codeFile.endsWith('.ts')) return { code: source, format: 'module' };
  const key = executor.digests?.code;
  let stripped = key ? strippedByDigest.get(key) : undefined;
  if (stripped === undefined) {
    stripped = stripTypes(source);
    if (stripped === undefined) return { code: source, format: 'module-typescript' };
    if (key) {
      if (strippedByDigest.size >= STRIPPED_KEPT)
        strippedByDigest.delete(strippedByDigest.keys().next().value!);
      strippedByDigest.set(key, stripped);
    }
  }
  return { code: stripped, format: 'module' };
}

/**
 * The executor's half of the harness request: its code (see {@link runnableCode}),
 * schema and contract. A warm process of the sandbox's pool gets it first, with
 * `warm: true`, and its call ({@link harnessCall}) later, on a second line.
 *
 * @example
 * child.stdin.write(`${JSON.stringify(harnessPreload(executor, { warm: true }))}\n`);
 */
export function harnessPreload(executor: VerifiedExecutor, options: { warm?: boolean } = {}) {
  const { code, format } = runnableCode(executor);
  return {
    ...(options.warm ? { warm: true } : {}),
    // The verified bytes (or JavaScript derived from them here) travel with the request: the
    // process never opens the code file, so a file rewritten after verification is not what runs.
    codeFile: executor.codeFile,
    code,
    format,
    schema: executor.schema,
    inputRef: executor.manifest.contract.input_schema,
    outputRef: executor.manifest.contract.output_schema,
    errorClasses: executor.manifest.contract.error_classes,
  };
}

/**
 * The call's half of the harness request. Of the context it carries only what
 * the process may know: never `protect`, never `credentials` — of the handles
 * offered to the call (`places.credentials`) it carries where their servers
 * are ({@link credentialView}), not who logs in or with what. The deadline is
 * taken now, when the call is handed over.
 *
 * @example
 * child.stdin.end(`${JSON.stringify(harnessCall(executor, args, context, { tmpDir }, profile))}\n`);
 */
export function harnessCall(
  executor: VerifiedExecutor,
  args: unknown,
  context: InvocationContext,
  places: { tmpDir: string; workspace?: string; credentials?: Readonly<Record<string, HostCredential>> },
  profile: ExpandedProfile,
) {
  return {
    args,
    context: {
      traceId: context.traceId,
      turnId: context.turnId,
      // the harness pins the executor's Date to it; absent, JSON leaves the key out
      asOf: context.asOf,
      workspace: places.workspace ?? context.workspace,
      tmpDir: places.tmpDir,
      deadline: Date.now() + executor.manifest.sandbox.max_duration_ms,
      config: context.config ?? {},
      profile,
      credentials: Object.fromEntries(
        Object.entries(places.credentials ?? {}).map(([handle, credential]) => [
          handle,
          credentialView(credential),
        ]),
      ),
    },
  };
}

/**
 * The JSON request a cold-started harness reads on stdin: {@link harnessPreload}
 * and {@link harnessCall} in one document.
 *
 * @example
 * runChild({ ...spec, input: harnessRequest(executor, args, context, { tmpDir }, profile) });
 */
export function harnessRequest(
  executor: VerifiedExecutor,
  args: unknown,
  context: InvocationContext,
  places: { tmpDir: string; workspace?: string; credentials?: Readonly<Record<string, HostCredential>> },
  profile: ExpandedProfile,
): string {
  return JSON.stringify({
    ...harnessPreload(executor),
    ...harnessCall(executor, args, context, places, profile),
  });
}

/** Maps a child report to the audit exit kind. */
export function exitKind(report: ChildReport): RunReport['exit'] {
  if (report.result.ok) return 'ok';
  const errorClass = report.result.error.class;
  if (errorClass === 'Timeout') return 'timeout';
  if (errorClass === 'Crashed' || errorClass === 'NonJsonOutput' || errorClass === 'OutputTooLarge')
    return 'crash';
  return 'error';
}

/**
 * The refusal of a context no harness should receive (an `asOf` that is not
 * an ISO 8601 instant), or undefined. Runners check it before anything
 * starts, so a caller that skips the invoker still gets data, not a crash.
 */
export function contextRefusal(
  context: InvocationContext,
  isolation: IsolationRecord,
): RunReport | undefined {
  if (context.asOf === undefined) return undefined;
  const problem = invalidAsOf(context.asOf);
  return problem === undefined ? undefined : refusal('InvalidInput', problem, isolation);
}

/** A refusal before any process starts. */
export function refusal(errorClass: string, message: string, isolation: IsolationRecord): RunReport {
  return { result: failure(errorClass, message, { isolation }), durationMs: 0, stdout: '', exit: 'policy' };
}

/** Settings of {@link createProcessRunner}. */
export interface ProcessRunnerSettings {
  /** The Node binary. Default: the current one. */
  nodePath?: string;
  /**
   * Refuse executors whose profile asks for more than tier `none` (default
   * true). Turning it off is for tests of the SDK itself; the result's
   * isolation record then says `belowDeclared: true`.
   */
  enforceMinimumTier?: boolean;
}

/**
 * The plain runner: a bare child process with a timeout that kills its process
 * group and caps on stdout and stderr. Isolation tier `none`: executors that
 * declare a stronger minimum are refused unless `enforceMinimumTier` is off.
 *
 * @example
 * const runner = createProcessRunner();
 * const report = await runner.run({ executor, args: { path: 'a.txt' }, context });
 */
export function createProcessRunner(settings: ProcessRunnerSettings = {}): ExecutorRunner {
  const enforce = settings.enforceMinimumTier ?? true;
  return {
    tier: 'none',
    async run({ executor, args, context, signal }) {
      const badContext = contextRefusal(context, { tier: 'none', layers: [] });
      if (badContext) return badContext;
      const declared = executor.manifest.sandbox.min_tier;
      const below = tierRank(declared) > tierRank('none');
      const isolation: IsolationRecord = {
        tier: 'none',
        layers: ['process'],
        ...(below ? { belowDeclared: true } : {}),
      };
      if (below && enforce) {
        return refusal(
          'IsolationUnavailable',
          `${executor.name} requires isolation tier "${declared}"; the plain process runner gives "none". Use @metnos/sandbox.`,
          { tier: 'none', layers: [] },
        );
      }
      const tmpDir = await mkdtemp(join(tmpdir(), 'metnos-call-'));
      try {
        const profile = expandProfile(executor.manifest.sandbox, { workspace: context.workspace, tmpDir });
        const spec: ChildSpec = {
          command: settings.nodePath ?? process.execPath,
          args: ['--disable-warning=ExperimentalWarning', HARNESS_PATH],
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpDir, TMPDIR: tmpDir, LANG: 'C.UTF-8' },
          cwd: tmpDir,
          input: harnessRequest(executor, args, context, { tmpDir }, profile),
          timeoutMs: executor.manifest.sandbox.max_duration_ms,
          maxStdoutBytes: executor.manifest.sandbox.max_output_bytes,
          maxStderrBytes: 1024 * 1024,
          isolation,
          signal,
        };
        const report = await runChild(spec);
        return {
          result: report.result,
          durationMs: report.durationMs,
          stdout: report.stdout,
          exit: exitKind(report),
        };
      } finally {
        await rm(tmpDir, { recursive: true, force: true });
      }
    },
  };
}
