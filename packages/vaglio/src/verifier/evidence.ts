import { canonicalJson } from '../call-hash.ts';
import type { Evidence } from './shapes.ts';
import { stringsIn } from './sources.ts';

/**
 * Error classes that mean policy refused the call rather than that it broke:
 * the sandbox's and the executors' refusals.
 */
export const POLICY_ERROR_CLASSES: ReadonlySet<string> = new Set([
  'PolicyViolation',
  'Forbidden',
  'PermissionDenied',
  'Unauthorized',
  'Blocked',
]);

/** Every string of one evidence item: its arguments and its result, keys included. */
export function evidenceTexts(item: Evidence): string[] {
  return stringsIn([item.args, item.result]);
}

/** The identity of the call behind an evidence item: tool and canonical arguments. */
export function callKey(item: Evidence): string {
  return `${item.tool}\n${canonicalJson(item.args ?? null)}`;
}

/** The error class of a failed step, `undefined` for a successful one. */
export function errorClassOf(item: Evidence): string | undefined {
  return item.result.ok ? undefined : item.result.error.class;
}

/** A step policy did not let through: the vaglio did not approve it, or it failed with a policy class. */
export function isRefused(item: Evidence): boolean {
  const errorClass = errorClassOf(item);
  return !item.approved || (errorClass !== undefined && POLICY_ERROR_CLASSES.has(errorClass));
}

/** Failed steps that no later successful run of the same call (tool and arguments) made good. */
export function unrecoveredFailures(evidence: readonly Evidence[]): Evidence[] {
  return evidence.filter(
    (item, index) =>
      !item.result.ok &&
      !evidence.slice(index + 1).some((later) => later.result.ok && callKey(later) === callKey(item)),
  );
}

/** `step2 (fs_read: NotFound)`: how a reason names a failed step, without its message. */
export function describeFailure(item: Evidence): string {
  return `${item.id} (${item.tool}: ${errorClassOf(item) ?? 'not approved'})`;
}
