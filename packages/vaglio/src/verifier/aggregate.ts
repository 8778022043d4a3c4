import type { Advisory, Outcome, TraceEntry } from './types.ts';

/**
 * The aggregate verdict of seed 003's table: any block → `block`; else any
 * warn → `warn`; else `pass` (an empty trace passes).
 *
 * @example
 * aggregate([{ class: 'rules', rule: 'a.b', outcome: 'warn', reason: 'x' }]); // 'warn'
 */
export function aggregate(trace: readonly TraceEntry[]): Outcome {
  if (trace.some((entry) => entry.outcome === 'block')) return 'block';
  if (trace.some((entry) => entry.outcome === 'warn')) return 'warn';
  return 'pass';
}

/** One advisory per warning in the trace, in trace order. */
export function advisoriesOf(trace: readonly TraceEntry[]): Advisory[] {
  return trace
    .filter((entry) => entry.outcome === 'warn')
    .map((entry) => ({ class: entry.class, rule: entry.rule, reason: entry.reason ?? '' }));
}

/** `block: answer.non-empty: the final message is empty; …`: the outcome and the rules behind it. */
export function summarise(outcome: Outcome, trace: readonly TraceEntry[], pack: string): string {
  if (outcome === 'pass') return `pass: the schema, every rule of ${pack} and every probe passed`;
  const named = trace.filter((entry) => entry.outcome === outcome);
  return `${outcome}: ${named.map((entry) => `${entry.rule}: ${entry.reason ?? ''}`).join('; ')}`;
}
