import { EXCEPTION_PATTERN, type Plan, stepNumbers } from './plan.ts';

/** A `policy.branch` that fired, with the number of the step it starts. */
export interface TakenBranch {
  on: string;
  goto: string;
  gotoNumber: number;
  final_message?: string;
}

/** What the plan's policy says about a step failing with an error class. */
export type PolicyAction = { kind: 'abort'; pattern: string } | { kind: 'branch'; branch: TakenBranch };

function matches(pattern: string, stepId: string, errorClass: string): boolean {
  const parsed = EXCEPTION_PATTERN.exec(pattern);
  if (!parsed || parsed[1] !== stepId) return false;
  return parsed[2] === '*' || parsed[2] === errorClass;
}

/**
 * The plan's answer to a failed step: `abort` when `policy.abortOn` lists
 * `<step id>.exception.<class>` (or `.*`), else the first `policy.branch`
 * whose `on` matches; undefined when the policy says nothing (the failure
 * goes to Recovery). Abort wins over branch.
 *
 * @example
 * policyFor(plan, 's1', 'NotFound'); // { kind: 'branch', branch: { on: 's1.exception.NotFound', goto: 's3', gotoNumber: 3 } }
 */
export function policyFor(plan: Plan, stepId: string, errorClass: string): PolicyAction | undefined {
  const policy = plan.policy;
  if (!policy) return undefined;
  const abort = policy.abortOn.find((pattern) => matches(pattern, stepId, errorClass));
  if (abort) return { kind: 'abort', pattern: abort };
  const branch = policy.branch.find((candidate) => matches(candidate.on, stepId, errorClass));
  if (!branch) return undefined;
  const gotoNumber = stepNumbers(plan).get(branch.goto);
  if (gotoNumber === undefined) return undefined;
  return { kind: 'branch', branch: { ...branch, gotoNumber } };
}
