import type { Rule } from '../types.ts';
import { conflictProbe } from './conflict.ts';
import { hallucinationProbe } from './hallucination.ts';
import { injectionProbe } from './injection.ts';
import { policyProbe } from './policy.ts';

/** The adversarial probes, in the order they run after every rule pack. */
export const PROBES: readonly Rule[] = Object.freeze([
  injectionProbe,
  hallucinationProbe,
  conflictProbe,
  policyProbe,
]);

export { conflictProbe, hallucinationProbe, injectionProbe, policyProbe };
