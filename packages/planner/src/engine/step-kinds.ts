import type { VerifiedExecutor } from '@metnos/executor-sdk';
import { VerificationBlocked, type Verifier, type VerifierVerdict } from '@metnos/vaglio';
import { producersOf } from './dependencies.ts';
import type { ExecutedStep } from './executor.ts';
import { type DecisionStep, type Plan, stepNumbers } from './plan.ts';
import { type ReferenceScope, resolvePlaceholders } from './references.ts';

/** What a plan would emit, as the verifier reads it. */
export type Candidate = { kind: string; [field: string]: unknown };

/** The evidence ids the verifier knows a step by: `step<N>`, as placeholders name steps. */
const evidenceId = (number: number) => `step${number}`;

/** A decision's draft resolved into a typed candidate; evidence items become the step ids they name. */
export function draftCandidate(plan: Plan, step: DecisionStep, scope: ReferenceScope): Candidate {
  const draft = resolvePlaceholders(step.draft, scope);
  const ids = stepNumbers(plan);
  const producers = producersOf(plan);
  const cites = (step.evidence ?? [])
    .map((item) => producers.get(item) ?? ids.get(item))
    .filter((number): number is number => number !== undefined)
    .map(evidenceId);
  if (
    draft !== null &&
    typeof draft === 'object' &&
    !Array.isArray(draft) &&
    typeof (draft as Candidate).kind === 'string'
  )
    return { ...(draft as Candidate), ...(cites.length > 0 ? { cites } : {}) };
  const message = typeof draft === 'string' ? draft : JSON.stringify(draft);
  return { kind: 'answer', message, ...(cites.length > 0 ? { cites } : {}) };
}

/** The message a candidate shows the person. */
export function candidateMessage(candidate: Candidate): string {
  return typeof candidate.message === 'string' ? candidate.message : JSON.stringify(candidate);
}

/** The executed steps as the verifier's evidence. */
export function evidenceOf(steps: readonly ExecutedStep[], executors: ReadonlyMap<string, VerifiedExecutor>) {
  return steps.map((step) => {
    const { isolation: _isolation, ...result } = step.result as ExecutedStep['result'] & {
      isolation?: unknown;
    };
    return {
      id: evidenceId(step.number),
      tool: step.tool,
      args: step.args,
      sideEffects: executors.get(step.tool)?.manifest.contract.side_effects ?? false,
      approved: true,
      result,
    };
  });
}

/** What the verify steps said. */
export interface Verification {
  verdicts: VerifierVerdict[];
  /** The first block, as the typed exception the plan stops with. */
  blocked?: VerificationBlocked;
  advisories: string[];
}

/**
 * Runs every verify step of the plan over the candidate, in plan order; a
 * block anywhere stops the plan (`blocked`), warnings become advisories.
 * Without a verifier a verify step blocks: a plan that asked to be checked
 * is never emitted unchecked.
 */
export function runVerifySteps(
  plan: Plan,
  verifier: Verifier | undefined,
  input: {
    candidate: Candidate;
    steps: readonly ExecutedStep[];
    executors: ReadonlyMap<string, VerifiedExecutor>;
    request: string;
    runtime: Record<string, string>;
  },
): Verification {
  const verdicts: VerifierVerdict[] = [];
  const advisories: string[] = [];
  const evidence = evidenceOf(input.steps, input.executors);
  for (const step of plan.steps) {
    if (step.kind !== 'verify') continue;
    const verdict: VerifierVerdict = verifier
      ? verifier.verify({
          rulePack: step.rulePack,
          candidate: input.candidate,
          evidence,
          request: input.request,
          runtime: input.runtime,
        })
      : {
          outcome: 'block',
          emit: false,
          pack: { id: step.rulePack, version: null },
          verifier: 'none',
          hash: '',
          trace: [
            {
              class: 'schema',
              rule: 'verifier.present',
              outcome: 'block',
              reason: 'no verifier is configured',
            },
          ],
          advisories: [],
          reason: 'block: no verifier is configured',
        };
    verdicts.push(verdict);
    for (const advisory of verdict.advisories) advisories.push(`${advisory.rule}: ${advisory.reason}`);
    if (verdict.outcome === 'block')
      return { verdicts, advisories, blocked: new VerificationBlocked({ verdict }) };
  }
  return { verdicts, advisories };
}
