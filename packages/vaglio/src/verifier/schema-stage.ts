import { exceedsJsonDepth, MAX_JSON_DEPTH } from '@metnos/executor-sdk';
import type { z } from 'zod';
import { MAX_STRINGS } from '../arguments.ts';
import { listSome } from './reasons.ts';
import { type Candidate, type Evidence, evidenceSchema, type VerifyInput } from './shapes.ts';
import { exceedsStringLimit, indexSources } from './sources.ts';
import type { RulePack, TraceEntry, VerificationContext } from './types.ts';

const evidenceListSchema = evidenceSchema.array().max(256);

type Checked<T> = { entry: TraceEntry; value?: T };

function pass<T>(rule: string, value: T): Checked<T> {
  return { entry: { class: 'schema', rule, outcome: 'pass' }, value };
}

function block<T>(rule: string, reason: string): Checked<T> {
  return { entry: { class: 'schema', rule, outcome: 'block', reason } };
}

function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return listSome(issues.map((issue) => `${issue.path.map(String).join('.') || '(top)'}: ${issue.message}`));
}

/** A frozen deep copy: rules cannot change what later rules read, nor the caller's objects. */
function frozenCopy<T>(value: T): T {
  const copy = structuredClone(value);
  const pending: unknown[] = [copy];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null || Object.isFrozen(node)) continue;
    Object.freeze(node);
    pending.push(...Object.values(node));
  }
  return copy;
}

/** Plain data only (no functions, class instances that cannot be cloned): a frozen copy, or a reason. */
function copyOf<T>(value: T): { ok: true; copy: T } | { ok: false } {
  try {
    return { ok: true, copy: frozenCopy(value) };
  } catch {
    return { ok: false };
  }
}

interface CheckedInput {
  evidence: readonly Evidence[];
  request: string;
  runtime: Readonly<Record<string, string>>;
}

function checkInput(input: VerifyInput): Checked<CheckedInput> {
  const rule = 'schema.input';
  const { evidence, request = '', runtime = {} } = input;
  if (!Array.isArray(evidence)) return block(rule, 'evidence must be a list of step results');
  if (typeof request !== 'string') return block(rule, 'request must be a string');
  if (
    typeof runtime !== 'object' ||
    runtime === null ||
    Object.values(runtime).some((value) => typeof value !== 'string')
  )
    return block(rule, 'runtime must map names to strings');
  if (exceedsJsonDepth(evidence))
    return block(rule, `the evidence nests deeper than ${MAX_JSON_DEPTH} levels`);
  if (exceedsStringLimit([evidence]))
    return block(rule, `the evidence holds more than ${MAX_STRINGS} strings`);
  const parsed = evidenceListSchema.safeParse(evidence);
  if (!parsed.success)
    return block(rule, `the evidence does not match its shape: ${describeIssues(parsed.error.issues)}`);
  const ids = parsed.data.map((item) => item.id);
  const twice = [...new Set(ids.filter((id, index) => ids.indexOf(id) !== index))];
  if (twice.length > 0) return block(rule, `evidence ids appear twice: ${listSome(twice)}`);
  const copied = copyOf({ evidence: parsed.data, request, runtime: { ...runtime } });
  if (!copied.ok) return block(rule, 'the evidence holds values that are not plain data');
  return pass(rule, copied.copy);
}

function checkCandidate(candidate: unknown, kinds: Readonly<Record<string, z.ZodType>>): Checked<Candidate> {
  const rule = 'schema.candidate';
  const known = listSome(Object.keys(kinds));
  const kind =
    typeof candidate === 'object' && candidate !== null ? (candidate as { kind?: unknown }).kind : undefined;
  if (typeof kind !== 'string') return block(rule, `the candidate needs a kind (${known})`);
  const schema = Object.hasOwn(kinds, kind) ? kinds[kind] : undefined;
  if (!schema) return block(rule, `unknown candidate kind "${kind.slice(0, 40)}" (known: ${known})`);
  if (exceedsJsonDepth(candidate))
    return block(rule, `the candidate nests deeper than ${MAX_JSON_DEPTH} levels`);
  const parsed = schema.safeParse(candidate);
  if (!parsed.success)
    return block(
      rule,
      `the ${kind} candidate does not match its shape: ${describeIssues(parsed.error.issues)}`,
    );
  const output = parsed.data as Candidate;
  if (typeof output !== 'object' || output === null || output.kind !== kind)
    return block(rule, `the ${kind} schema must return an object of kind "${kind}"`);
  const copied = copyOf(output);
  if (!copied.ok) return block(rule, 'the candidate holds values that are not plain data');
  return pass(rule, copied.copy);
}

function checkPack(rulePack: string, pack: RulePack | undefined, kind: string | undefined, ids: string[]) {
  const rule = 'schema.pack';
  if (!pack)
    return block(
      rule,
      `no rule pack "${String(rulePack).slice(0, 80)}" is registered (known: ${listSome(ids)})`,
    );
  if (pack.kinds && kind !== undefined && !pack.kinds.includes(kind))
    return block(rule, `${pack.id} reads ${listSome([...pack.kinds])} candidates, not ${kind}`);
  return pass(rule, pack);
}

/** What the schema class found: its trace entries, and the context for later classes when nothing blocked. */
export interface SchemaOutcome {
  trace: TraceEntry[];
  context?: VerificationContext;
}

/**
 * The schema class, first of the three: the evidence, request and runtime
 * values have their shapes (`schema.input`); the candidate matches the shape
 * declared for its kind (`schema.candidate`); the pack exists and reads that
 * kind (`schema.pack`). All three always run; any block stops the verifier
 * here, since later rules read the typed shapes.
 */
export function checkSchema(
  input: VerifyInput,
  pack: RulePack | undefined,
  kinds: Readonly<Record<string, z.ZodType>>,
  packIds: string[],
): SchemaOutcome {
  const checkedInput = checkInput(input);
  const checkedCandidate = checkCandidate(input.candidate, kinds);
  const checkedPack = checkPack(input.rulePack, pack, checkedCandidate.value?.kind, packIds);
  const trace = [checkedInput.entry, checkedCandidate.entry, checkedPack.entry];
  if (!checkedInput.value || !checkedCandidate.value || !checkedPack.value) return { trace };
  const { evidence, request, runtime } = checkedInput.value;
  const sources = indexSources([...evidence.map((item) => [item.args, item.result]), request, runtime]);
  return { trace, context: { candidate: checkedCandidate.value, evidence, request, runtime, sources } };
}
