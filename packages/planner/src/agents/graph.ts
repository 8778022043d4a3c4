import { AgentConfigError } from './errors.ts';
import type { HandoffContext, HandoffEdge, HandoffPlan } from './types.ts';

/** How often one agent may be entered in a run when the plan does not say. */
export const DEFAULT_MAX_AGENT_VISITS = 8;

/** A plan checked against the runtime's agents, with its defaults filled in. */
export interface CheckedPlan {
  entry: string;
  edges: HandoffEdge[];
  exits: ReadonlySet<string>;
  maxAgentVisits: number;
}

/**
 * Checks a handoff plan before a run: the entry, every edge's ends and every
 * exit must be agents of the runtime, and `maxAgentVisits` a positive
 * integer. Without a plan the first agent runs alone.
 *
 * @example
 * const plan = checkPlan({ entry: 'router', edges: [{ from: 'router', to: 'actor' }], exits: ['actor'] }, ids);
 */
export function checkPlan(plan: HandoffPlan | undefined, agentIds: readonly string[]): CheckedPlan {
  if (!plan) return { entry: agentIds[0]!, edges: [], exits: new Set([agentIds[0]!]), maxAgentVisits: 1 };
  const known = new Set(agentIds);
  const need = (id: unknown, field: string) => {
    if (typeof id !== 'string' || !known.has(id))
      throw new AgentConfigError({
        field,
        message: `plan.${field}: "${String(id)}" is not an agent of this runtime`,
      });
  };
  need(plan.entry, 'entry');
  for (const [index, edge] of (plan.edges ?? []).entries()) {
    need(edge.from, `edges[${index}].from`);
    need(edge.to, `edges[${index}].to`);
    if (edge.when !== undefined && typeof edge.when !== 'function')
      throw new AgentConfigError({
        field: `edges[${index}].when`,
        message: `plan.edges[${index}].when must be a function`,
      });
  }
  for (const [index, exit] of (plan.exits ?? []).entries()) need(exit, `exits[${index}]`);
  const maxAgentVisits = plan.maxAgentVisits ?? DEFAULT_MAX_AGENT_VISITS;
  if (!Number.isInteger(maxAgentVisits) || maxAgentVisits < 1)
    throw new AgentConfigError({
      field: 'maxAgentVisits',
      message: 'plan.maxAgentVisits must be a positive integer',
    });
  return {
    entry: plan.entry,
    edges: [...(plan.edges ?? [])],
    exits: new Set(plan.exits ?? []),
    maxAgentVisits,
  };
}

/**
 * The edge that fires after `from` finished with `finalAnswer`: the first
 * edge leaving `from` whose `when` matches (an edge without `when` always
 * does), or undefined when none does. A `when` that throws is a failure of
 * the run, not a silent mismatch: the error is thrown on.
 *
 * @example
 * nextEdge(plan, 'router', 'this is for the specialist', context)?.to; // 'specialist'
 */
export function nextEdge(
  plan: CheckedPlan,
  from: string,
  finalAnswer: string,
  context: HandoffContext,
): { edge: HandoffEdge; index: number } | undefined {
  for (const [index, edge] of plan.edges.entries()) {
    if (edge.from !== from) continue;
    if (edge.when === undefined || edge.when(finalAnswer, context) === true) return { edge, index };
  }
  return undefined;
}
