import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { createScriptedModel } from '../test/scripted-model.ts';
import { agentGraphFromConfig, agentsConfigSchema, whenPredicate } from './config.ts';
import { AgentConfigError } from './errors.ts';

const TOML = `
[agents.triage]
entry = "router"
exits = ["actor"]
max_agent_visits = 3

[agents.triage.agent.router]
prompt = "Say 'billing' for invoices, anything else otherwise."
tier = "fast"
executors = []

[agents.triage.agent.specialist]
prompt = "Answer billing questions from the notes."
tier = "wise"
budget = { max_turns = 4, max_cost_usd = 0.5 }

[agents.triage.agent.actor]
prompt = "Append the answer to the notes."
executors = ["notes_append"]
[agents.triage.agent.actor.llm]
provider = "ollama"
model = "qwen3:8b"
base_url = "http://127.0.0.1:11434"

[[agents.triage.edge]]
from = "router"
to = "specialist"
when = { contains = "BILLING", ignore_case = true }

[[agents.triage.edge]]
from = "router"
to = "actor"

[[agents.triage.edge]]
from = "specialist"
to = "actor"
when = { matches = "due on \\\\d+" }
`;

const tiers = {
  fast: createScriptedModel([], { id: 'fast-model' }),
  middle: createScriptedModel([], { id: 'middle-model' }),
  wise: createScriptedModel([], { id: 'wise-model' }),
};

describe('agent graphs in metnos.toml', () => {
  it('builds the agents, their models, budgets and the plan with its predicates', () => {
    const config = agentsConfigSchema.parse((parse(TOML) as { agents: unknown }).agents);
    const { agents, plan } = agentGraphFromConfig('triage', config.triage!, { tiers });
    expect(agents.map((agent) => [agent.id, agent.provider.id, agent.executors])).toEqual([
      ['router', 'fast-model', []],
      ['specialist', 'wise-model', undefined],
      ['actor', 'qwen3:8b', ['notes_append']],
    ]);
    expect(agents[1]!.budget).toMatchObject({ maxTurns: 4, maxCostUsd: 0.5 });
    expect(plan).toMatchObject({ entry: 'router', exits: ['actor'], maxAgentVisits: 3 });
    expect(plan.edges[0]!.when!('a Billing question', { from: 'router', visits: {} })).toBe(true);
    expect(plan.edges[0]!.when!('a holiday', { from: 'router', visits: {} })).toBe(false);
    expect(plan.edges[1]!.when).toBeUndefined();
    expect(plan.edges[2]!.when!('due on 1 June', { from: 'specialist', visits: {} })).toBe(true);
  });

  it('refuses what it cannot run: a bad regex, tier and llm together, an unknown agent, an unknown key', () => {
    const graph = (extra: string) =>
      parse(`[agents.g]\nentry = "a"\n[agents.g.agent.a]\nprompt = "p"\n${extra}`);
    const bad = [
      graph('[[agents.g.edge]]\nfrom = "a"\nto = "a"\nwhen = { matches = "(" }'),
      graph('tier = "fast"\n[agents.g.agent.a.llm]\nprovider = "ollama"\nmodel = "m"'),
      graph('temperature = 2'),
      graph('[[agents.g.edge]]\nfrom = "a"\nto = "a"\nwhen = { contains = "x", equals = "y" }'),
    ];
    for (const document of bad)
      expect(agentsConfigSchema.safeParse((document as { agents: unknown }).agents).success).toBe(false);
    const unknown = agentsConfigSchema.parse(
      (graph('[[agents.g.edge]]\nfrom = "a"\nto = "ghost"') as { agents: unknown }).agents,
    );
    expect(() => agentGraphFromConfig('g', unknown.g!, { tiers })).toThrow(AgentConfigError);
  });

  it('matches equals after trimming, case-sensitively unless told', () => {
    expect(whenPredicate({ equals: 'yes' })(' yes\n')).toBe(true);
    expect(whenPredicate({ equals: 'yes' })('Yes')).toBe(false);
    expect(whenPredicate({ equals: 'yes', ignore_case: true })('Yes')).toBe(true);
  });
});
