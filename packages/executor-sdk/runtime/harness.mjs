// The executor host process. Reads its request on stdin, loads the code the
// host sent, validates input and output against schema.json, and writes
// exactly one JSON result line on stdout. Imports are limited to node:
// built-ins and the SDK's runtime modules below; everything the code prints
// goes to stderr.
//
// The request is one JSON line with everything in it (a cold start), or, for a
// process of the sandbox's warm pool, two lines: first the executor (code,
// schema, contract) with `warm: true`, after which the harness prepares what it
// can, answers `{"ready":true}` and blocks on stdin; then the call (arguments
// and context). Either way the process serves one call and exits.
import { readSync, writeSync } from 'node:fs';
import { isBuiltin, registerHooks } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isExecutorDefinition } from './define.mjs';
import { validate } from './json-schema.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const defineUrl = pathToFileURL(join(here, 'define.mjs')).href;
/**
 * The only modules beside node: built-ins an executor may import: host code
 * of this folder, which the sandbox exposes read-only. Neither imports
 * anything but node: built-ins, so they load under the same rule.
 */
const SDK_MODULES = new Map([
  ['@metnos/executor-sdk/define', defineUrl],
  ['@metnos/executor-sdk/telegram', pathToFileURL(join(here, 'telegram.mjs')).href],
]);
const RUNTIME_CLASSES = new Set(['InvalidInput', 'InvalidOutput', 'Crashed']);
// The real clock, taken before any pinning: ctx.remainingMs() measures the deadline with it.
const realNow = Date.now;

function emit(result) {
  writeSync(1, `${JSON.stringify(result)}\n`);
}

function failure(errorClass, message) {
  return { ok: false, error: { class: errorClass, message: String(message).slice(0, 2000) } };
}

function resolveRef(schema, ref) {
  let node = schema;
  for (const part of ref.split('#/')[1].split('/')) node = node?.[part];
  return node;
}

/**
 * Pins the global `Date` to `epochMs` for the executor's code, so a replayed
 * turn sees the instant its first run saw: `Date.now()`, `new Date()` and
 * `Date()` answer it; `new Date(x)`, `Date.UTC` and `Date.parse` work as
 * always. The replacement shares `Date.prototype` with the real constructor
 * (and inherits its statics), so `instanceof Date` holds for dates made
 * either way, including those Node's internals make (`fs.Stats#mtime`).
 * `performance.now()`, `process.hrtime()` and timers keep the real clock.
 */
function pinClock(epochMs) {
  const RealDate = Date;
  function PinnedDate(...args) {
    // Called without new, Date ignores its arguments and answers "now" as a string.
    if (new.target === undefined) return new RealDate(epochMs).toString();
    return Reflect.construct(RealDate, args.length === 0 ? [epochMs] : args, new.target);
  }
  Object.setPrototypeOf(PinnedDate, RealDate);
  Object.defineProperties(PinnedDate, {
    name: { value: 'Date' },
    length: { value: RealDate.length },
    prototype: { value: RealDate.prototype, writable: false },
    now: { value: () => epochMs, writable: true, configurable: true },
  });
  Object.defineProperty(RealDate.prototype, 'constructor', {
    value: PinnedDate,
    writable: true,
    configurable: true,
  });
  globalThis.Date = PinnedDate;
}

/** Bytes read from stdin past the line last returned. */
let pending = Buffer.alloc(0);

/**
 * The next line of stdin, read with blocking reads (a warm process waits here
 * for its call, using no CPU), parsed as JSON; undefined at the end of input.
 */
function readRequestLine() {
  const chunk = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    const end = pending.indexOf(10);
    if (end !== -1) {
      const line = pending.subarray(0, end).toString('utf8');
      pending = pending.subarray(end + 1);
      return JSON.parse(line);
    }
    let count;
    try {
      count = readSync(0, chunk, 0, chunk.length, null);
    } catch (error) {
      if (error.code === 'EAGAIN') {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
        continue;
      }
      throw error;
    }
    if (count === 0) {
      if (pending.length === 0) return undefined;
      const line = pending.toString('utf8');
      pending = Buffer.alloc(0);
      return JSON.parse(line);
    }
    pending = Buffer.concat([pending, chunk.subarray(0, count)]);
  }
}

/** The `node:` modules the code names in static imports: loaded while a warm process waits. */
function builtinsNamed(code) {
  const found = new Set();
  for (const match of code.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
    if (isBuiltin(match[1])) found.add(match[1]);
  }
  return [...found];
}

/**
 * Everything that does not depend on the call: the import rules, the console
 * redirect, the node: built-ins the code names. The code itself is imported
 * only with the call, after the clock is pinned, so code that reads the clock
 * at load time sees the call's instant in a warm process too.
 */
async function prepare(request) {
  const { codeFile, code, format } = request;
  if (typeof code !== 'string' || typeof codeFile !== 'string')
    return failure('Crashed', 'the host sent no verified code');
  const codeUrl = pathToFileURL(codeFile).href;
  // The host verified these bytes against the signature and sent them on stdin (as stripped
  // JavaScript when it derived that from them); the code file itself is neither mounted nor
  // read, so nothing written to it after verification runs.
  const codeFormat =
    format === 'module' ? 'module' : codeFile.endsWith('.ts') ? 'module-typescript' : 'module';

  for (const method of ['log', 'info', 'debug', 'warn', 'error', 'trace', 'dir', 'table']) {
    console[method] = (...parts) => process.stderr.write(`${parts.map(String).join(' ')}\n`);
  }

  registerHooks({
    load(url, loadContext, nextLoad) {
      if (url === codeUrl) return { format: codeFormat, source: code, shortCircuit: true };
      return nextLoad(url, loadContext);
    },
    resolve(specifier, resolveContext, nextResolve) {
      const sdkModule = SDK_MODULES.get(specifier);
      if (sdkModule !== undefined) return { url: sdkModule, shortCircuit: true };
      // isBuiltin also knows the prefix-only modules (node:sqlite, node:test, node:sea).
      if (isBuiltin(specifier)) return nextResolve(specifier, resolveContext);
      if (specifier === codeUrl) return { url: codeUrl, format: codeFormat, shortCircuit: true };
      if (resolveContext.parentURL === undefined) return nextResolve(specifier, resolveContext);
      throw new Error(
        `import of "${specifier}" refused: executors may import only node: built-ins, ${[...SDK_MODULES.keys()].join(' and ')}`,
      );
    },
  });
  if (request.warm === true) {
    // built-ins only: their loading runs no executor code and reads no clock the call could pin
    for (const specifier of builtinsNamed(code)) await import(specifier).catch(() => undefined);
  }
  return { codeUrl };
}

async function call(prepared, request) {
  const { args, context, schema, inputRef, outputRef, errorClasses } = request;
  const { codeUrl } = prepared;
  // The host checked asOf already; a request that skipped the check is refused here too.
  const pinnedMs = context?.asOf === undefined ? undefined : Date.parse(context.asOf);
  if (pinnedMs !== undefined && (typeof context.asOf !== 'string' || !Number.isFinite(pinnedMs))) {
    emit(failure('InvalidInput', `asOf "${String(context.asOf).slice(0, 64)}" is not an ISO 8601 instant`));
    return;
  }

  const inputSchema = resolveRef(schema, inputRef);
  const inputErrors = validate(inputSchema, args, schema);
  if (inputErrors.length > 0) {
    emit(failure('InvalidInput', inputErrors.slice(0, 5).join('; ')));
    return;
  }

  // Before the import: code that reads the clock at load time sees the pinned instant too.
  if (pinnedMs !== undefined) pinClock(pinnedMs);

  let definition;
  try {
    definition = (await import(codeUrl)).default;
  } catch (error) {
    emit(failure('Crashed', `the code file failed to load: ${error.message}`));
    return;
  }
  if (!isExecutorDefinition(definition)) {
    emit(failure('Crashed', 'the code file must `export default defineExecutor({ run })`'));
    return;
  }
  const ctx = Object.freeze({
    ...context,
    // On a pinned clock the deadline stands on the pinned clock too: asOf plus the time left, so
    // code that computes `deadline - Date.now()` gets its real budget, never the gap to asOf.
    ...(pinnedMs === undefined ? {} : { deadline: pinnedMs + Math.max(0, context.deadline - realNow()) }),
    config: Object.freeze(context.config ?? {}),
    profile: Object.freeze(context.profile),
    credentials: Object.freeze(context.credentials ?? {}),
    log: (message) => process.stderr.write(`${String(message)}\n`),
    // Real time left before the deadline, also when Date is pinned to asOf.
    remainingMs: () => Math.max(0, context.deadline - realNow()),
  });

  let outcome;
  try {
    outcome = await definition.run(args, ctx);
  } catch (error) {
    if (error?.name === 'ExecutorFailure' && typeof error.errorClass === 'string') {
      outcome = { ok: false, error: { class: error.errorClass, message: String(error.message) } };
    } else {
      emit(failure('Crashed', `run() threw: ${error?.stack ?? error}`));
      return;
    }
  }

  if (outcome === null || typeof outcome !== 'object' || typeof outcome.ok !== 'boolean') {
    emit(failure('InvalidOutput', 'run() must return { ok, content?, metadata?, error? }'));
    return;
  }
  if (outcome.ok) {
    const outputErrors = validate(resolveRef(schema, outputRef), outcome.content, schema);
    if (outputErrors.length > 0) {
      emit(failure('InvalidOutput', outputErrors.slice(0, 5).join('; ')));
      return;
    }
    emit({ ok: true, content: outcome.content, ...(outcome.metadata ? { metadata: outcome.metadata } : {}) });
    return;
  }
  const errorClass = outcome.error?.class;
  if (!errorClasses.includes(errorClass) && !RUNTIME_CLASSES.has(errorClass)) {
    emit(failure('InvalidOutput', `error class "${errorClass}" is not declared in the manifest`));
    return;
  }
  emit({
    ok: false,
    error: { class: errorClass, message: String(outcome.error.message ?? '').slice(0, 4000) },
    ...(outcome.metadata ? { metadata: outcome.metadata } : {}),
  });
}

async function main() {
  let first;
  try {
    first = readRequestLine();
  } catch (error) {
    emit(failure('InvalidInput', `the host sent an unreadable request: ${error.message}`));
    return;
  }
  if (first === null || typeof first !== 'object') {
    emit(failure('InvalidInput', 'the host sent no request'));
    return;
  }
  const prepared = await prepare(first);
  if (!prepared.codeUrl) {
    emit(prepared);
    return;
  }
  if (first.warm !== true) {
    await call(prepared, first);
    return;
  }
  emit({ ready: true });
  let second;
  try {
    second = readRequestLine();
  } catch (error) {
    emit(failure('InvalidInput', `the host sent an unreadable request: ${error.message}`));
    return;
  }
  // the host went away before a call came: nothing ran, nothing to say
  if (second === undefined) return;
  // the executor's part of the request is the one this process was prepared with
  await call(prepared, {
    ...second,
    schema: first.schema,
    inputRef: first.inputRef,
    outputRef: first.outputRef,
    errorClasses: first.errorClasses,
  });
}

main().then(
  () => process.exit(0),
  (error) => {
    emit(failure('Crashed', error?.stack ?? String(error)));
    process.exit(0);
  },
);
