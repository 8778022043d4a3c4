import { isToolStep, type Plan, type PlanStep, stepNumbers } from './plan.ts';
import { findPlaceholders, referencedStepNumbers } from './references.ts';
import { refRoot } from './run-memory.ts';

/** The run-memory keys of a plan and the step producing each. */
export function producersOf(plan: Plan): Map<string, number> {
  const producers = new Map<string, number>();
  plan.steps.forEach((step, index) => {
    if (isToolStep(step) && step.produces !== undefined && !producers.has(step.produces))
      producers.set(step.produces, index + 1);
  });
  return producers;
}

/** What a step reads: a tool's arguments, a decision's draft. */
function readsOf(step: PlanStep): unknown {
  if (isToolStep(step)) return step.args;
  if (step.kind === 'decision') return step.draft;
  return undefined;
}

/**
 * The steps each step waits for: those its arguments or draft reference
 * (`from_step`, `${stepN…}`, `$ref` to a produced key), those in its
 * `depends`, a decision's evidence; a verify step waits for every step
 * that is not a verify step (it judges what the plan would emit).
 */
export function dependenciesOf(plan: Plan): Array<Set<number>> {
  const ids = stepNumbers(plan);
  const producers = producersOf(plan);
  return plan.steps.map((step, index) => {
    const set = new Set<number>();
    if (step.kind === 'verify') {
      plan.steps.forEach((other, otherIndex) => {
        if (other.kind !== 'verify') set.add(otherIndex + 1);
      });
      return set;
    }
    const reads = readsOf(step);
    if (isToolStep(step)) for (const number of referencedStepNumbers(step.args)) set.add(number);
    for (const match of findPlaceholders(reads)) {
      if (match.kind === 'step') set.add(match.step!);
      if (match.kind === 'ref') {
        const found = refRoot(match.name!, producers.keys());
        if (found?.root === 'produced') set.add(producers.get(found.key)!);
      }
    }
    for (const dependency of step.depends ?? []) {
      const number = typeof dependency === 'number' ? dependency : ids.get(dependency);
      if (number !== undefined) set.add(number);
    }
    if (step.kind === 'decision')
      for (const item of step.evidence ?? []) {
        const number = producers.get(item) ?? ids.get(item);
        if (number !== undefined) set.add(number);
      }
    set.delete(index + 1);
    return set;
  });
}

/** The steps only a `policy.branch` starts. */
export function branchTargets(plan: Plan): Set<number> {
  const ids = stepNumbers(plan);
  const targets = new Set<number>();
  for (const branch of plan.policy?.branch ?? []) {
    const number = ids.get(branch.goto);
    if (number !== undefined) targets.add(number);
  }
  return targets;
}

/** Does step `number` wait, directly or through others, for step `on`? */
export function dependsOnStep(plan: Plan, number: number, on: number): boolean {
  const dependencies = dependenciesOf(plan);
  const seen = new Set<number>();
  const pending = [number];
  while (pending.length > 0) {
    const current = pending.pop()!;
    for (const dependency of dependencies[current - 1] ?? []) {
      if (dependency === on) return true;
      if (!seen.has(dependency)) {
        seen.add(dependency);
        pending.push(dependency);
      }
    }
  }
  return false;
}
