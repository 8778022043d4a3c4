import type { Candidate, Evidence } from './shapes.ts';
import type { Sources } from './sources.ts';

/** What one rule says, and what the verifier says overall. */
export type Outcome = 'pass' | 'warn' | 'block';

/** The three rule classes, in the order the verifier runs them. */
export type RuleClass = 'schema' | 'rules' | 'probe';

/** One rule's answer. A warning or a block always says why, in a short line. */
export type RuleResult = { outcome: 'pass'; reason?: string } | { outcome: 'warn' | 'block'; reason: string };

/**
 * What every business rule and probe reads: the typed candidate, its
 * evidence, the user's request and the turn's pinned runtime values, all
 * frozen copies, plus the evidence read once into {@link Sources}.
 */
export interface VerificationContext {
  candidate: Candidate;
  evidence: readonly Evidence[];
  /** The user's own words; `''` when not given. */
  request: string;
  /** The turn's pinned runtime values (actor, lang, channel, now). */
  runtime: Readonly<Record<string, string>>;
  /** Every string and number of the evidence, the request and the runtime values. */
  sources: Sources;
}

/**
 * One business rule or probe. `check` must be a pure function of the context
 * (no clock, no randomness, no I/O, no model): verdicts are reproducible
 * from (pack version, candidate). A rule that throws blocks.
 *
 * @example
 * const nonEmpty: Rule = {
 *   id: 'answer.non-empty',
 *   description: 'the final message says something',
 *   check: ({ candidate }) =>
 *     messageOf(candidate).trim() ? { outcome: 'pass' } : { outcome: 'block', reason: 'the final message is empty' },
 * };
 */
export interface Rule {
  /** Unique inside its pack, e.g. `answer.non-empty`; `schema.*` and `probe.*` belong to the verifier. */
  id: string;
  /** One line for the README and for people reading a trace. */
  description: string;
  check(context: VerificationContext): RuleResult;
}

/**
 * A versioned set of business rules. The id names the major version
 * (`rules.files.v1`), `version` the full one (`1.2.0`); a verdict records
 * both, so changing any rule means a new version.
 */
export interface RulePack {
  /** `rules.<name>.v<major>`, e.g. `rules.files.v1`. */
  id: string;
  /** Semantic version whose major equals the id's `v<major>`. */
  version: string;
  description: string;
  /** Candidate kinds the pack reads; absent for any kind. */
  kinds?: readonly string[];
  rules: readonly Rule[];
}

/** One line of a verdict's trace: which rule, of which class, said what. */
export interface TraceEntry {
  class: RuleClass;
  rule: string;
  outcome: Outcome;
  /** Present for every warn and block, and for a pass that has something to say. */
  reason?: string;
}

/** A warning the planner surfaces to the person along with the emitted answer. */
export interface Advisory {
  class: RuleClass;
  rule: string;
  reason: string;
}

/**
 * The verifier's ruling on one candidate. A verdict is data (a blocked
 * candidate is an expected outcome); `verifier.release` turns a block into
 * a {@link VerificationBlocked} error for callers that want one.
 */
export interface VerifierVerdict {
  /** `pass`: emit; `warn`: emit with `advisories`; `block`: do not emit. */
  outcome: Outcome;
  /** Whether the candidate may be emitted (`outcome` is not `block`). */
  emit: boolean;
  /** The rule pack asked for; `version` is `null` when no such pack is registered. */
  pack: { id: string; version: string | null };
  /** Version of the verifier's own schema checks and probes. */
  verifier: string;
  /** SHA-256 (hex) of (verifier version, pack id and version, canonical candidate with its evidence). */
  hash: string;
  /** Every rule that ran, in order: schema, then the pack's rules, then the probes. */
  trace: TraceEntry[];
  /** The warnings, one per warning rule, whatever the outcome. */
  advisories: Advisory[];
  /** One line: the outcome and the rules that warned or blocked. */
  reason: string;
}
