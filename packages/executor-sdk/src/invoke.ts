import { randomUUID } from 'node:crypto';
import type { ValidateFunction } from 'ajv';
import AjvModule from 'ajv';
import type { AuditLog } from './audit.ts';
import { summarizeInput } from './audit.ts';
import type { Catalog } from './catalog.ts';
import { type Caller, type InvocationContext, invalidAsOf, type ProtectedPath } from './context.ts';
import type { CredentialSet } from './credentials.ts';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from './depth.ts';
import { loadBlake3 } from './hash.ts';
import type { HostServices } from './host-services.ts';
import type { ReceiptSink } from './receipts/chain.ts';
import { receiptDigest } from './receipts/format.ts';
import { type ExecutorResult, failure, RUNTIME_ERROR_CLASSES } from './result.ts';
import type { ExecutorRunner, RunReport } from './runner.ts';
import type { VerifiedExecutor } from './verify.ts';

const Ajv = ((AjvModule as unknown as { default?: typeof AjvModule }).default ??
  AjvModule) as unknown as new (
  options: Record<string, unknown>,
) => {
  addSchema(schema: unknown, key: string): void;
  getSchema(ref: string): ValidateFunction | undefined;
};

const validators = new Map<string, ValidateFunction>();
const RUNTIME_CLASSES = new Set<string>(RUNTIME_ERROR_CLASSES);

/** Host-side Ajv validator for an executor's input or output, compiled once per schema digest. */
export function hostValidator(executor: VerifiedExecutor, which: 'input' | 'output'): ValidateFunction {
  const ref =
    which === 'input' ? executor.manifest.contract.input_schema : executor.manifest.contract.output_schema;
  const key = `${executor.digests.schema}|${ref}`;
  let validator = validators.get(key);
  if (!validator) {
    const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
    ajv.addSchema(executor.schema, 'schema.json');
    validator = ajv.getSchema(ref);
    if (!validator) throw new Error(`schema.json has no ${ref}`);
    validators.set(key, validator);
  }
  return validator;
}

function describeErrors(validator: ValidateFunction): string {
  return (validator.errors ?? [])
    .slice(0, 5)
    .map((error) => `${error.instancePath || '/'} ${error.message ?? 'is invalid'}`)
    .join('; ');
}

/** Settings of {@link createInvoker}. */
export interface InvokerSettings {
  catalog: Catalog;
  runner: ExecutorRunner;
  audit?: AuditLog;
  clock?: () => Date;
  /**
   * Host paths no executor may write, beside the catalog's own folders (which
   * are always added): trust lists, the `metnos.toml` files Metnos reads, keys.
   * Sandbox runners refuse any profile that reaches them for write.
   */
  protect?: readonly ProtectedPath[];
  /**
   * The person's credentials by handle (`loadCredentials`), put on every
   * call's context host-only. The sandbox offers a call only those its
   * manifest declares; no audit line, result or error carries them.
   */
  credentials?: CredentialSet;
  /**
   * The signed receipt chain (`createReceiptChain`): every invocation, refusals
   * included, appends a receipt with the digests of its arguments and output,
   * never their values. A chain that cannot take one refuses the call
   * (`AuditUnavailable`), as the audit log does.
   */
  receipts?: ReceiptSink;
}

/** Options of one invocation. */
export interface InvokeOptions {
  /** A version other than the default. */
  version?: string;
  traceId?: string;
  turnId?: string;
  /**
   * The turn's pinned instant (ISO 8601 with `Z` or an offset): the executor's
   * `Date.now()` and `new Date()` answer it, so a replay sees the same time.
   * See {@link InvocationContext.asOf}. Anything else is `InvalidInput`.
   */
  asOf?: string;
  workspace: string;
  caller: Caller;
  config?: Record<string, unknown>;
  /** Credentials for this call instead of the invoker's (birth tests); host-only, like the invoker's. */
  credentials?: CredentialSet;
  /** Host services this call may reach (`metnos.host`); host-only, never sent to the process. */
  hostServices?: HostServices;
  signal?: AbortSignal;
}

/**
 * The invocation flow: resolve the default version, re-verify it, validate the
 * input on the host, run it through the runner, validate the output on the
 * host, and write one audit line. Always resolves to an {@link ExecutorResult}:
 * arguments or a result nested deeper than {@link MAX_JSON_DEPTH} levels are
 * `InvalidInput` / `InvalidOutput`, and an exception anywhere in the flow
 * becomes `Crashed`, each with its audit line.
 *
 * @example
 * const invoker = createInvoker({ catalog, runner, audit });
 * const result = await invoker.invoke('fs_read', { path: 'notes.md' }, { workspace, caller: { kind: 'cli' } });
 */
export function createInvoker(settings: InvokerSettings) {
  const clock = settings.clock ?? (() => new Date());

  async function record(
    name: string,
    executor: VerifiedExecutor | undefined,
    args: unknown,
    context: InvocationContext,
    report: RunReport,
    started: Date,
  ): Promise<void> {
    const digest = await loadBlake3();
    const note = (field: 'audit_error' | 'receipt_error', what: string, error: unknown) => {
      // The call has happened; its result is not lost because the log could not take the line
      // (a full disk, a read-only folder). The caller sees why in the metadata.
      const message = `the ${what} could not be written: ${(error as Error)?.message ?? String(error)}`;
      report.result = { ...report.result, metadata: { ...report.result.metadata, [field]: message } };
    };
    // side by side: two files, each with its own lock and its own failure note
    await Promise.all([
      settings.audit && appendLine(digest).catch((error) => note('audit_error', 'audit line', error)),
      settings.receipts && appendReceipt(digest).catch((error) => note('receipt_error', 'receipt', error)),
    ]);

    async function appendReceipt(digest: (data: string) => string): Promise<void> {
      await settings.receipts!.append({
        kind: 'executor',
        data: {
          executor: name.slice(0, 128),
          version: executor?.version ?? null,
          caller: context.caller.kind,
          schedule: context.caller.kind === 'scheduler' ? context.caller.scheduleId.slice(0, 128) : null,
          trace_id: context.traceId.slice(0, 256),
          turn_id: context.turnId?.slice(0, 256) ?? null,
          // arguments nested too deep were refused unread; they are not walked here either
          args: exceedsJsonDepth(args) ? null : await receiptDigest(args),
          output: report.stdout ? digest(report.stdout) : null,
          output_size: Buffer.byteLength(report.stdout),
          exit: report.exit,
          error_class: report.result.ok ? null : report.result.error.class.slice(0, 128),
          duration_ms: Math.round(report.durationMs),
        },
      });
    }

    async function appendLine(digest: (data: string) => string): Promise<void> {
      await settings.audit!.append({
        ts: started.toISOString(),
        trace_id: context.traceId,
        turn_id: context.turnId ?? null,
        executor: name,
        version: executor?.version ?? null,
        caller: context.caller,
        input: summarizeInput(args),
        output: { size: Buffer.byteLength(report.stdout), sha: report.stdout ? digest(report.stdout) : null },
        duration_ms: Math.round(report.durationMs),
        exit: report.exit,
        ...(report.result.ok ? {} : { error_class: report.result.error.class }),
        ...(report.result.isolation ? { isolation: report.result.isolation.tier } : {}),
      });
    }
  }

  const unguarded = {
    async invoke(name: string, args: unknown, options: InvokeOptions): Promise<ExecutorResult> {
      const started = clock();
      const context: InvocationContext = {
        traceId: options.traceId ?? randomUUID(),
        turnId: options.turnId,
        ...(options.asOf !== undefined ? { asOf: options.asOf } : {}),
        workspace: options.workspace,
        caller: options.caller,
        config: options.config,
        protect: [...settings.catalog.protectedPaths(), ...(settings.protect ?? [])],
        ...(options.credentials || settings.credentials
          ? { credentials: options.credentials ?? settings.credentials }
          : {}),
        ...(options.hostServices ? { hostServices: options.hostServices } : {}),
      };
      const refuse = async (errorClass: string, message: string, executor?: VerifiedExecutor) => {
        const report: RunReport = {
          result: failure(errorClass, message),
          durationMs: 0,
          stdout: '',
          exit: 'policy',
        };
        await record(name, executor, args, context, report, started);
        return report.result;
      };
      const loaded = settings.catalog.get(name, options.version);
      if (!loaded) {
        return refuse(
          'NotInvocable',
          `no invocable executor "${name}"${options.version ? `@${options.version}` : ''}`,
        );
      }
      if (exceedsJsonDepth(args)) {
        return refuse(
          'InvalidInput',
          `arguments nest deeper than ${MAX_JSON_DEPTH} levels, the limit for executor input`,
          loaded,
        );
      }
      const badAsOf = options.asOf === undefined ? undefined : invalidAsOf(options.asOf);
      if (badAsOf !== undefined) return refuse('InvalidInput', badAsOf, loaded);
      let executor: VerifiedExecutor;
      try {
        executor = await settings.catalog.reverify(loaded);
      } catch (error) {
        return refuse(
          'NotInvocable',
          `${name} failed re-verification and was quarantined: ${(error as Error).message}`,
          loaded,
        );
      }
      let inputValidator: ValidateFunction;
      let outputValidator: ValidateFunction;
      try {
        inputValidator = hostValidator(executor, 'input');
        outputValidator = hostValidator(executor, 'output');
      } catch (error) {
        return refuse(
          'NotInvocable',
          `${name}'s schema.json cannot be compiled on the host: ${(error as Error).message}`,
          executor,
        );
      }
      if (!inputValidator(args)) {
        return refuse(
          'InvalidInput',
          `arguments rejected by ${name}'s schema: ${describeErrors(inputValidator)}`,
          executor,
        );
      }
      // Fail closed: a call whose line or receipt cannot be written is not made.
      try {
        // side by side: the two checks look at different files
        await Promise.all([settings.audit?.check(started.toISOString()), settings.receipts?.check()]);
      } catch (error) {
        return failure('AuditUnavailable', `${name} was not run: ${(error as Error).message}`);
      }
      const report = await settings.runner.run({ executor, args, context, signal: options.signal });
      const { result } = report;
      if (exceedsJsonDepth(result.metadata) || (result.ok && exceedsJsonDepth(result.content))) {
        report.result = failure(
          'InvalidOutput',
          `${name} returned a result nested deeper than ${MAX_JSON_DEPTH} levels`,
          { isolation: result.isolation },
        );
        report.exit = 'error';
      } else if (report.result.ok) {
        if (!outputValidator(report.result.content)) {
          report.result = failure(
            'InvalidOutput',
            `${name} returned content its schema rejects: ${describeErrors(outputValidator)}`,
            {
              isolation: report.result.isolation,
            },
          );
          report.exit = 'error';
        }
      } else {
        // The harness checks this too; the host checks again in case the process wrote its own line.
        const errorClass = report.result.error.class;
        if (
          !executor.manifest.contract.error_classes.includes(errorClass) &&
          !RUNTIME_CLASSES.has(errorClass)
        ) {
          report.result = failure(
            'InvalidOutput',
            `${name} returned error class "${errorClass}", which its manifest does not declare`,
            {
              isolation: report.result.isolation,
            },
          );
          report.exit = 'error';
        } else if (report.exit === 'ok') {
          report.exit = 'error';
        }
      }
      await record(name, executor, args, context, report, started);
      return report.result;
    },
  };

  /** What an exception where none should be becomes: a `Crashed` result with its audit line. */
  async function crashed(
    name: string,
    args: unknown,
    options: InvokeOptions | undefined,
    started: Date,
    error: unknown,
  ): Promise<ExecutorResult> {
    const report: RunReport = {
      result: failure('Crashed', `the invocation of ${name} failed unexpectedly: ${errorText(error)}`),
      durationMs: Math.max(0, clock().getTime() - started.getTime()),
      stdout: '',
      exit: 'crash',
    };
    const context: InvocationContext = {
      traceId: options?.traceId ?? randomUUID(),
      turnId: options?.turnId,
      workspace: options?.workspace ?? '',
      caller: options?.caller ?? { kind: 'cli' },
      config: options?.config,
    };
    try {
      await record(name, undefined, args, context, report, started);
    } catch (auditError) {
      report.result.metadata = {
        audit_error: `the audit line could not be written: ${errorText(auditError)}`,
      };
    }
    return report.result;
  }

  return {
    async invoke(name: string, args: unknown, options: InvokeOptions): Promise<ExecutorResult> {
      const started = clock();
      try {
        return await unguarded.invoke(name, args, options);
      } catch (error) {
        return crashed(name, args, options, started, error);
      }
    },
  };
}

function errorText(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return 'an error that cannot be described';
  }
}

export type Invoker = ReturnType<typeof createInvoker>;
