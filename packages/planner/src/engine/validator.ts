import {
  contractSchema,
  exceedsJsonDepth,
  hostValidator,
  MAX_JSON_DEPTH,
  type VerifiedExecutor,
} from '@metnos/executor-sdk';
import type { Plan } from './plan.ts';
import { findPlaceholders } from './references.ts';

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

/**
 * L2: checks a proposed plan without running anything: every tool exists in
 * the catalog, arguments validate against the tool's schema (placeholders
 * are checked for shape, not type), every `from_step` and `${stepN.field}`
 * points at an earlier step whose output can hold that field, fillers are
 * declared, runtime keys are known. Arguments nested deeper than
 * `MAX_JSON_DEPTH` are an error, found before any of those walks. Returns the
 * list of errors, empty when the plan may run.
 *
 * @example
 * const errors = validatePlan(plan, catalog.executors());
 */
export function validatePlan(
  plan: Plan,
  executors: readonly VerifiedExecutor[],
  options: { slots?: readonly string[] } = {},
): string[] {
  const errors: string[] = [];
  const byName = new Map(executors.map((executor) => [executor.name, executor]));
  const ids = new Map<string, number>();
  plan.steps.forEach((step, index) => {
    ids.set(step.id ?? `s${index + 1}`, index + 1);
  });

  const checkPlaceholders = (value: unknown, stepNumber: number, where: string) => {
    for (const match of findPlaceholders(value)) {
      if (match.kind === 'step') {
        if (match.step! < 1 || match.step! >= stepNumber) {
          errors.push(`${where}: ${match.text} must point at an earlier step (1..${stepNumber - 1})`);
          continue;
        }
        const source = byName.get(plan.steps[match.step! - 1]!.tool);
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
      } else if (match.kind === 'slot' && !(options.slots ?? []).includes(match.name!)) {
        errors.push(`${where}: ${match.text} is not bound by the request`);
      }
    }
  };

  plan.steps.forEach((step, index) => {
    const number = index + 1;
    const where = `step ${number} (${step.tool})`;
    if (exceedsJsonDepth(step.args)) {
      errors.push(`${where}: arguments nest deeper than ${MAX_JSON_DEPTH} levels`);
      return;
    }
    const executor = byName.get(step.tool);
    if (!executor) {
      errors.push(`${where}: no such tool`);
      return;
    }
    for (const dependency of step.depends ?? []) {
      const target = typeof dependency === 'number' ? dependency : ids.get(dependency);
      if (target === undefined || target >= number)
        errors.push(`${where}: depends on "${dependency}", which is not an earlier step`);
    }
    const args: Record<string, unknown> = { ...step.args };
    if ('from_step' in args) {
      const from = args.from_step;
      if (typeof from !== 'number' || !Number.isInteger(from) || from < 1 || from >= number) {
        errors.push(`${where}: from_step must be the number of an earlier step`);
      }
      delete args.from_step;
      args.entries = [];
    }
    checkPlaceholders(args, number, where);
    const validator = hostValidator(executor, 'input');
    const probe = withoutPlaceholders(args);
    if (!validator(probe)) {
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
  });
  checkPlaceholders(plan.final_message, plan.steps.length + 1, 'final_message');
  return errors;
}
