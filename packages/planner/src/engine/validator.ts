import {
  contractSchema,
  exceedsJsonDepth,
  hostValidator,
  MAX_JSON_DEPTH,
  type VerifiedExecutor,
} from '@metnos/executor-sdk';
import { satisfies } from 'semver';
import { branchTargets, dependenciesOf, dependsOnStep } from './dependencies.ts';
import {
  type DecisionStep,
  EXCEPTION_PATTERN,
  isToolStep,
  normalizeRange,
  type Plan,
  type PlanStep,
  stepNumbers,
  type ToolStep,
} from './plan.ts';
import { findPlaceholders } from './references.ts';
import { refRoot } from './run-memory.ts';

const OBSERVATION_KEYS = new Set(['ok', 'content', 'metadata', 'error']);
const RUNTIME_KEYS = new Set(['actor', 'lang', 'channel', 'now', 'today']);
const SENTINEL = '\u0000metnos-placeholder';

/** Can the output of `executor` hold `path` (after the observation key)? Unknown shapes are allowed. */
function outputHasField(executor: VerifiedExecutor, path: string[]): boolean {
  const first = path[0];
  if (first === undefined || first === 'length' || first === '*') return true;
  let schema = contractSchema(executor, 'output');
  for (const part of path) {
    if (!schema || part === '*' || part === 'length' || /^\d+$/.test(part)) return true;
    if (schema.$ref) return true;
    const properties = schema.properties as Record<string, Record<string, unknown>> | undefined;
    if (!properties) return schema.type === 'object' && schema.additionalProperties !== false;
    if (!Object.hasOwn(properties, part))
      return schema.additionalProperties !== undefined && schema.additionalProperties !== false;
    schema = properties[part];
    if (schema?.type === 'array') schema = (schema.items as Record<string, unknown> | undefined) ?? undefined;
  }
  return true;
}

function withoutPlaceholders(value: unknown): unknown {
  if (typeof value === 'string') return findPlaceholders(value).length > 0 ? SENTINEL : value;
  if (Array.isArray(value)) return value.map(withoutPlaceholders);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withoutPlaceholders(item)]));
  }
  return value;
}

function valueAt(root: unknown, pointer: string): unknown {
  let node = root;
  for (const part of pointer.split('/').filter(Boolean))
    node = (node as Record<string, unknown> | undefined)?.[part];
  return node;
}

/** What the checks of one plan share. */
interface PlanCheck {
  plan: Plan;
  byName: Map<string, VerifiedExecutor>;
  ids: Map<string, number>;
  /** The step number producing each run-memory key. */
  producers: Map<string, number>;
  slots: readonly string[];
  errors: string[];
}

function checkRef(check: PlanCheck, path: string, stepNumber: number, where: string): void {
  const produced = [...check.producers.keys()];
  const found = refRoot(path, produced);
  if (!found) {
    check.errors.push(
      `${where}: $ref:${path} names nothing in run memory (${produced.join(', ') || 'no step produces a key'})`,
    );
    return;
  }
  if (found.root !== 'produced') return;
  const producer = check.producers.get(found.key)!;
  // a $ref makes the reader wait for the producer, so an earlier producer is enough
  if (producer >= stepNumber) {
    check.errors.push(`${where}: $ref:${path} reads "${found.key}", which step ${producer} produces later`);
    return;
  }
  const source = check.plan.steps[producer - 1]!;
  const executor = isToolStep(source) ? check.byName.get(source.tool) : undefined;
  if (executor && !outputHasField(executor, found.rest))
    check.errors.push(`${where}: $ref:${path}: ${executor.name} does not produce "${found.rest.join('.')}"`);
}

function checkPlaceholders(check: PlanCheck, value: unknown, stepNumber: number, where: string): void {
  const { plan, byName, errors } = check;
  for (const match of findPlaceholders(value)) {
    if (match.kind === 'ref') {
      checkRef(check, match.name!, stepNumber, where);
    } else if (match.kind === 'step') {
      if (match.step! < 1 || match.step! >= stepNumber) {
        errors.push(`${where}: ${match.text} must point at an earlier step (1..${stepNumber - 1})`);
        continue;
      }
      const referenced = plan.steps[match.step! - 1]!;
      if (referenced.kind === 'verify') {
        errors.push(`${where}: ${match.text} points at a verify step, which runs last and produces nothing`);
        continue;
      }
      const source = isToolStep(referenced) ? byName.get(referenced.tool) : undefined;
      if (!source) continue;
      const path = match.path!;
      const fieldPath = OBSERVATION_KEYS.has(path[0] ?? '')
        ? path[0] === 'content'
          ? path.slice(1)
          : []
        : path;
      if (!outputHasField(source, fieldPath)) {
        errors.push(`${where}: ${match.text}: ${source.name} does not produce "${fieldPath.join('.')}"`);
      }
    } else if (match.kind === 'filler' && !Object.hasOwn(plan.fillers, match.name!)) {
      errors.push(`${where}: ${match.text} names a filler that "fillers" does not declare`);
    } else if (match.kind === 'runtime' && !RUNTIME_KEYS.has(match.name!)) {
      errors.push(`${where}: ${match.text} is not a runtime key (${[...RUNTIME_KEYS].join(', ')})`);
    } else if (match.kind === 'slot' && !check.slots.includes(match.name!)) {
      errors.push(`${where}: ${match.text} is not bound by the request`);
    }
  }
}

function checkDepends(check: PlanCheck, step: PlanStep, number: number, where: string): void {
  for (const dependency of step.depends ?? []) {
    const target = typeof dependency === 'number' ? dependency : check.ids.get(dependency);
    if (target === undefined || target >= number)
      check.errors.push(`${where}: depends on "${dependency}", which is not an earlier step`);
  }
}

/** A tool step: the tool exists in a version the plan accepts, and its arguments fit its schema. */
function checkToolStep(check: PlanCheck, step: ToolStep, number: number): void {
  const where = `step ${number} (${step.tool})`;
  const { errors } = check;
  if (exceedsJsonDepth(step.args)) {
    errors.push(`${where}: arguments nest deeper than ${MAX_JSON_DEPTH} levels`);
    return;
  }
  const executor = check.byName.get(step.tool);
  if (!executor) {
    errors.push(`${where}: no such tool`);
    return;
  }
  if (step.version !== undefined && !versionFits(executor, step.version))
    errors.push(
      `${where}: the catalog has ${step.tool} ${executor.manifest.executor.version}, outside the range "${step.version}"`,
    );
  checkDepends(check, step, number, where);
  const args: Record<string, unknown> = { ...step.args };
  if ('from_step' in args) {
    const from = args.from_step;
    if (typeof from !== 'number' || !Number.isInteger(from) || from < 1 || from >= number) {
      errors.push(`${where}: from_step must be the number of an earlier step`);
    }
    delete args.from_step;
    args.entries = [];
  }
  checkPlaceholders(check, args, number, where);
  const validator = hostValidator(executor, 'input');
  const probe = withoutPlaceholders(args);
  if (validator(probe)) return;
  for (const error of validator.errors ?? []) {
    const pointer = error.instancePath;
    if (pointer && valueAt(probe, pointer) === SENTINEL) continue;
    if (
      error.keyword === 'additionalProperties' &&
      (error.params as { additionalProperty?: string }).additionalProperty === 'entries' &&
      'from_step' in step.args
    ) {
      errors.push(`${where}: ${step.tool} takes no entries, so from_step cannot feed it`);
      continue;
    }
    errors.push(`${where}: argument ${pointer || '/'} ${error.message ?? 'is invalid'}`);
  }
}

/** A decision step: its draft's references and its evidence point at earlier steps or produced keys. */
function checkDecisionStep(check: PlanCheck, step: DecisionStep, number: number): void {
  const where = `step ${number} (decision)`;
  checkDepends(check, step, number, where);
  checkPlaceholders(check, step.draft, number, where);
  for (const item of step.evidence ?? []) {
    const producer = check.producers.get(item) ?? check.ids.get(item);
    if (producer === undefined || producer >= number)
      check.errors.push(
        `${where}: evidence "${item}" is neither an earlier step nor a key an earlier step produces`,
      );
  }
  if (
    check.plan.steps.filter((other) => other.kind === 'decision').length > 1 &&
    step !== firstDecision(check.plan)
  )
    check.errors.push(`${where}: a plan has at most one decision`);
}

function firstDecision(plan: Plan): PlanStep | undefined {
  return plan.steps.find((step) => step.kind === 'decision');
}

/** `policy.abortOn` and `policy.branch` name steps that exist; a branch target is a later step no one else waits for. */
function checkPolicy(check: PlanCheck): void {
  const policy = check.plan.policy;
  if (!policy) return;
  const stepOf = (pattern: string, where: string) => {
    const id = EXCEPTION_PATTERN.exec(pattern)![1]!;
    const number = check.ids.get(id);
    if (number === undefined) check.errors.push(`${where}: "${pattern}" names no step "${id}"`);
    else if (!isToolStep(check.plan.steps[number - 1]!))
      check.errors.push(`${where}: "${pattern}": only tool steps raise exceptions`);
    return number;
  };
  for (const pattern of policy.abortOn) stepOf(pattern, 'policy.abortOn');
  const targets = branchTargets(check.plan);
  policy.branch.forEach((branch, index) => {
    const where = `policy.branch[${index}]`;
    const from = stepOf(branch.on, where);
    const to = check.ids.get(branch.goto);
    if (to === undefined) check.errors.push(`${where}: goto "${branch.goto}" names no step`);
    else if (from !== undefined && to <= from)
      check.errors.push(`${where}: goto must be a step after ${branch.on}`);
    else if (from !== undefined && dependsOnStep(check.plan, to, from))
      check.errors.push(`${where}: "${branch.goto}" waits for the step whose failure starts it`);
  });
  check.plan.steps.forEach((step, index) => {
    const number = index + 1;
    if (targets.has(number)) return;
    for (const target of targets)
      if (dependenciesOf(check.plan)[index]!.has(target))
        check.errors.push(`step ${number}: waits for step ${target}, which only a branch starts`);
  });
}

/**
 * L2: checks a proposed plan without running anything: every tool exists in
 * the catalog in a version the step accepts, arguments validate against the
 * tool's schema (placeholders are checked for shape, not type), every
 * `from_step`, `${stepN.field}` and `$ref` points at an earlier step whose
 * output can hold that field, `produces` keys are unique, decisions cite
 * earlier evidence, `policy` names real steps, fillers are declared,
 * runtime keys are known. Arguments nested deeper than `MAX_JSON_DEPTH` are
 * an error, found before any of those walks. Returns the list of errors,
 * empty when the plan may run.
 *
 * @example
 * const errors = validatePlan(plan, catalog.executors());
 */
export function validatePlan(
  plan: Plan,
  executors: readonly VerifiedExecutor[],
  options: { slots?: readonly string[] } = {},
): string[] {
  const check: PlanCheck = {
    plan,
    byName: new Map(executors.map((executor) => [executor.name, executor])),
    ids: stepNumbers(plan),
    producers: new Map(),
    slots: options.slots ?? [],
    errors: [],
  };
  plan.steps.forEach((step, index) => {
    if (!isToolStep(step) || step.produces === undefined) return;
    if (check.producers.has(step.produces))
      check.errors.push(`step ${index + 1} (${step.tool}): "${step.produces}" is produced twice`);
    else check.producers.set(step.produces, index + 1);
  });
  plan.steps.forEach((step, index) => {
    const number = index + 1;
    if (isToolStep(step)) checkToolStep(check, step, number);
    else if (step.kind === 'decision') checkDecisionStep(check, step, number);
    else checkDepends(check, step, number, `step ${number} (verify)`);
  });
  checkPolicy(check);
  checkPlaceholders(check, plan.final_message, plan.steps.length + 1, 'final_message');
  for (const [index, branch] of (plan.policy?.branch ?? []).entries())
    if (branch.final_message !== undefined)
      checkPlaceholders(
        check,
        branch.final_message,
        plan.steps.length + 1,
        `policy.branch[${index}].final_message`,
      );
  return check.errors;
}

/** Does the executor's manifest version satisfy the step's range? */
export function versionFits(executor: VerifiedExecutor, range: string): boolean {
  return satisfies(executor.manifest.executor.version, normalizeRange(range), { includePrerelease: true });
}
