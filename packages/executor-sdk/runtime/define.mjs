// The authoring surface of an executor's code file. Zero dependencies: the
// harness maps `@metnos/executor-sdk/define` to this file inside the sandbox.

const EXECUTOR = Symbol.for('metnos.executor.definition');

/**
 * Declares an executor. The code file's default export must be its result.
 *
 * @example
 * export default defineExecutor({
 *   async run(args, ctx) { return ok(`hello ${args.name}`); },
 * });
 */
export function defineExecutor(definition) {
  if (definition === null || typeof definition !== 'object' || typeof definition.run !== 'function') {
    throw new TypeError('defineExecutor expects an object with a run(args, ctx) function');
  }
  return Object.freeze({ ...definition, [EXECUTOR]: true });
}

/** True when `value` came from defineExecutor. */
export function isExecutorDefinition(value) {
  return value !== null && typeof value === 'object' && value[EXECUTOR] === true;
}

/** A successful outcome. */
export function ok(content, metadata) {
  return metadata === undefined ? { ok: true, content } : { ok: true, content, metadata };
}

/** A failed outcome with one of the manifest's error classes. */
export function fail(errorClass, message, metadata) {
  const outcome = { ok: false, error: { class: errorClass, message } };
  return metadata === undefined ? outcome : { ...outcome, metadata };
}

/** Throw this from run() to fail with an error class; the harness turns it into fail(). */
export class ExecutorFailure extends Error {
  constructor(errorClass, message) {
    super(message);
    this.name = 'ExecutorFailure';
    this.errorClass = errorClass;
  }
}
