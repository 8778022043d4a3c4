import { createHash } from 'node:crypto';
import { exceedsJsonDepth } from '@metnos/executor-sdk';
import type { z } from 'zod';
import { canonicalJson } from '../call-hash.ts';
import { VaglioSettingsError } from '../errors.ts';
import { advisoriesOf, aggregate, summarise } from './aggregate.ts';
import { BUILT_IN_PACKS } from './packs/index.ts';
import { PROBES } from './probes/index.ts';
import { createRulePackRegistry, type RulePackRegistry } from './rule-pack.ts';
import { checkSchema } from './schema-stage.ts';
import { BUILT_IN_KINDS, type VerifyInput } from './shapes.ts';
import type { Rule, RuleClass, RulePack, TraceEntry, VerificationContext, VerifierVerdict } from './types.ts';
import { VerificationBlocked } from './verification-blocked.ts';

/**
 * Version of the verifier's own rules (the schema checks and the probes). It
 * is part of every verdict and hash: changing a probe changes this version.
 */
export const VERIFIER_VERSION = 'verifier-1';

const MAX_REASON = 300;

/** Settings of {@link createVerifier}. */
export interface VerifierSettings {
  /** The rule packs plan steps may select. Default: {@link BUILT_IN_PACKS}. */
  packs?: RulePackRegistry | Iterable<RulePack>;
  /** Candidate kinds beside `answer` and `mail`, each with the zod schema its candidates must match. */
  kinds?: Readonly<Record<string, z.ZodType>>;
}

/** The deterministic guard between a plan's candidate result and what Metnos emits. */
export interface Verifier {
  /** Runs schema, the selected pack's rules, then the probes, and returns the verdict (a block is data). */
  verify(input: VerifyInput): VerifierVerdict;
  /** Like `verify`, but throws {@link VerificationBlocked} when the candidate must not be emitted. */
  release(input: VerifyInput): VerifierVerdict;
  /** The registry the verifier selects packs from; `register` adds one. */
  readonly packs: RulePackRegistry;
}

/** The business rules, then the probes: the classes that run once the schema passed. */
const STAGES: readonly { ruleClass: RuleClass; rules(pack: RulePack): readonly Rule[] }[] = [
  { ruleClass: 'rules', rules: (pack) => pack.rules },
  { ruleClass: 'probe', rules: () => PROBES },
];

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_REASON ? `${line.slice(0, MAX_REASON - 1)}…` : line;
}

function isRuleResult(value: unknown): value is { outcome: TraceEntry['outcome']; reason?: unknown } {
  if (typeof value !== 'object' || value === null) return false;
  const { outcome, reason } = value as { outcome?: unknown; reason?: unknown };
  if (outcome === 'pass') return reason === undefined || typeof reason === 'string';
  return (outcome === 'warn' || outcome === 'block') && typeof reason === 'string' && reason.trim() !== '';
}

/** Runs one rule; a rule that throws or answers anything but pass, warn or block blocks. */
function runRule(ruleClass: RuleClass, rule: Rule, context: VerificationContext): TraceEntry {
  let result: unknown;
  try {
    result = rule.check(context);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      class: ruleClass,
      rule: rule.id,
      outcome: 'block',
      reason: oneLine(`the rule failed: ${message}`),
    };
  }
  if (!isRuleResult(result))
    return {
      class: ruleClass,
      rule: rule.id,
      outcome: 'block',
      reason: 'the rule answered neither pass, nor warn or block with a reason',
    };
  const entry: TraceEntry = { class: ruleClass, rule: rule.id, outcome: result.outcome };
  if (typeof result.reason === 'string' && result.reason.trim()) entry.reason = oneLine(result.reason);
  return entry;
}

/** A part of the input as hashed: values too deep to walk all hash alike (they all block alike). */
function hashable(value: unknown): unknown {
  return exceedsJsonDepth(value) ? '[deeper than the JSON depth limit]' : value;
}

/**
 * SHA-256 (hex) over the canonical JSON of the verifier version, the pack id
 * and version, and the candidate with its evidence, request and runtime
 * values: read as the schema class typed them when it could, else as given.
 */
function verificationHash(
  input: VerifyInput,
  pack: RulePack | undefined,
  context: VerificationContext | undefined,
): string {
  const subject = context
    ? {
        candidate: context.candidate,
        evidence: context.evidence,
        request: context.request,
        runtime: context.runtime,
      }
    : {
        candidate: hashable(input.candidate),
        evidence: hashable(input.evidence),
        request: input.request ?? '',
        runtime: hashable(input.runtime ?? {}),
      };
  const identity = {
    verifier: VERIFIER_VERSION,
    pack: { id: input.rulePack, version: pack?.version ?? null },
    ...subject,
  };
  return createHash('sha256').update(canonicalJson(identity)).digest('hex');
}

function registryOf(packs: VerifierSettings['packs']): RulePackRegistry {
  if (packs === undefined) return createRulePackRegistry(BUILT_IN_PACKS);
  if (typeof (packs as RulePackRegistry).register === 'function') return packs as RulePackRegistry;
  return createRulePackRegistry(packs as Iterable<RulePack>);
}

function kindsOf(extra: VerifierSettings['kinds'] = {}): Readonly<Record<string, z.ZodType>> {
  for (const [kind, schema] of Object.entries(extra)) {
    if (Object.hasOwn(BUILT_IN_KINDS, kind))
      throw new VaglioSettingsError({
        setting: 'kinds',
        message: `kinds: "${kind}" is built in and cannot be replaced`,
      });
    if (typeof (schema as { safeParse?: unknown })?.safeParse !== 'function')
      throw new VaglioSettingsError({ setting: 'kinds', message: `kinds: "${kind}" needs a zod schema` });
  }
  return Object.freeze({ ...BUILT_IN_KINDS, ...extra });
}

/**
 * Creates the verifier: a deterministic guard between a plan's candidate
 * result (the final answer, a mail to send) with the step results it rests
 * on, and what Metnos emits. It runs three rule classes in a fixed order
 * (schema, the rule pack the plan's `{ kind: 'verify', rulePack }` step
 * selects, the adversarial probes) and aggregates them as seed 003 tables
 * it: all pass → `pass`; any warn, no block → `warn` with advisories; any
 * block → `block`. It never calls a model, reads no clock and no files.
 *
 * @example
 * const verifier = createVerifier();
 * const verdict = verifier.verify({
 *   rulePack: 'rules.answer.v1',
 *   candidate: { kind: 'answer', message: 'Saved notes.md.' },
 *   evidence: [{ id: 'step1', tool: 'fs_write', sideEffects: true, args: { path: 'notes.md' }, result: { ok: true } }],
 * });
 * verdict.outcome; // 'pass'
 */
export function createVerifier(settings: VerifierSettings = {}): Verifier {
  const packs = registryOf(settings.packs);
  const kinds = kindsOf(settings.kinds);

  function verify(input: VerifyInput): VerifierVerdict {
    const pack = typeof input?.rulePack === 'string' ? packs.get(input.rulePack) : undefined;
    const schema = checkSchema(input, pack, kinds, packs.ids());
    const trace = [...schema.trace];
    const context = schema.context;
    if (context && pack)
      for (const stage of STAGES)
        for (const rule of stage.rules(pack)) trace.push(runRule(stage.ruleClass, rule, context));
    const outcome = aggregate(trace);
    const packName = `${input.rulePack}@${pack?.version ?? 'unknown'}`;
    return {
      outcome,
      emit: outcome !== 'block',
      pack: { id: String(input.rulePack), version: pack?.version ?? null },
      verifier: VERIFIER_VERSION,
      hash: verificationHash(input, pack, context),
      trace,
      advisories: advisoriesOf(trace),
      reason: summarise(outcome, trace, packName),
    };
  }

  return {
    packs,
    verify,
    release(input) {
      const verdict = verify(input);
      if (verdict.outcome === 'block') throw new VerificationBlocked({ verdict });
      return verdict;
    },
  };
}
