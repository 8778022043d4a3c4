import { contractSchema, type VerifiedExecutor } from '@metnos/executor-sdk';
import { STOP_WORDS, tokenize } from './prefilter.ts';

/**
 * What a missing executor was wished for (the shape `@metnos/mnestome`
 * stores): the tool name asked for, the names of the arguments given (never
 * their values), the arguments piped from an earlier step, the source's
 * output fields and up to 16 content words of the request.
 */
export interface DesiredSignature {
  name: string;
  args: string[];
  piped: Array<{ arg: string; from: string; field: string }>;
  sourceOutput: string[];
  purpose: string[];
}

/**
 * The mnestome as the planner uses it (`createMnestome` from
 * `@metnos/mnestome` is one): the planner records what it observed and reads
 * what usually follows an executor, without depending on the package.
 */
export interface PassageRecorder {
  /** A passage from `src`'s output into `dst`; `dstExists: false` for a tool that does not exist. */
  recordPassing(src: string, dst: string, dstExists: boolean, desiredSignature?: DesiredSignature): void;
  /** One successful run of `executor`. */
  recordUse?(executor: string): void;
  /** What usually follows `src`: the pre-filter's history boost reads it. */
  passagesFrom?(src: string): ReadonlyArray<{ dst: string; weight: number }>;
}

/** What reactive compose reports about a missing tool (`@metnos/synt`'s `ComposeReport`). */
export interface ComposeReport {
  strategy: 'compose';
  state: 'composed' | 'abandoned';
  chain: string[];
  first_hop: string | null;
  suggestion: string;
}

/** Reactive compose as the planner uses it (`createComposer()` from `@metnos/synt` is one). */
export interface ChainComposer {
  compose(request: {
    from?: string;
    desired: DesiredSignature;
    executors: readonly VerifiedExecutor[];
  }): ComposeReport | undefined;
}

/** The most request words a desired signature keeps. */
const PURPOSE_WORDS = 16;

/**
 * Infers, conservatively, what a tool that does not exist was wished for:
 * its name, the argument names, which arguments were piped from which
 * source field, the fields the source's output schema declares, and the
 * request's content words. Values never enter it.
 *
 * @example
 * desiredSignatureOf({ tool: 'csv_sum', args: { text: '{{step1.content}}', column: 'amount' },
 *   piped: [{ arg: 'text', from: 'fs_read', field: 'content' }], source, request });
 */
export function desiredSignatureOf(call: {
  tool: string;
  args: unknown;
  piped: DesiredSignature['piped'];
  source?: VerifiedExecutor;
  request: string;
}): DesiredSignature {
  const args =
    call.args !== null && typeof call.args === 'object' && !Array.isArray(call.args)
      ? Object.keys(call.args).slice(0, 64).sort()
      : [];
  const output = call.source ? contractSchema(call.source, 'output') : undefined;
  const properties = output?.properties;
  const words = tokenize(call.request).filter((word) => !STOP_WORDS.has(word) && word.length <= 64);
  return {
    name: call.tool.slice(0, 200),
    args,
    piped: call.piped.slice(0, 64),
    sourceOutput:
      properties !== null && typeof properties === 'object' ? Object.keys(properties).slice(0, 200) : [],
    purpose: [...new Set(words)].slice(0, PURPOSE_WORDS),
  };
}

/**
 * Calls a hook the way every mnestome and synt hook is called in a turn:
 * whatever it throws stays here (the mnestome's writes are fail-safe
 * themselves; this keeps an injected one that is not from breaking a turn).
 */
export function quietly<T>(hook: () => T): T | undefined {
  try {
    return hook();
  } catch {
    return undefined;
  }
}
