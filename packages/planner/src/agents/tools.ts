import type { VerifiedExecutor } from '@metnos/executor-sdk';
import type { ToolSpec } from '../llm/types.ts';
import { toolSpec } from '../loop/model-call.ts';
import { SCRATCHPAD_READ_TOOL } from '../scratchpad.ts';
import { AgentConfigError } from './errors.ts';
import type { AgentDefinition, CustomTool } from './types.ts';

/** What a custom tool or an agent may be called. */
export const TOOL_NAME = /^[a-zA-Z_][a-zA-Z0-9_-]*$/;

/** Names Metnos keeps for its own tools, which no custom tool may take. */
export const RESERVED_TOOL_NAMES: readonly string[] = [SCRATCHPAD_READ_TOOL.name];

/** A tool one agent is offered: an executor of the catalog or a custom tool. */
export type AgentTool =
  | { kind: 'executor'; spec: ToolSpec; executor: VerifiedExecutor }
  | { kind: 'custom'; spec: ToolSpec; tool: CustomTool };

function checkCustomTool(tool: CustomTool, field: string, taken: ReadonlySet<string>): void {
  const fail = (message: string) => {
    throw new AgentConfigError({ field, message });
  };
  if (typeof tool?.name !== 'string' || !TOOL_NAME.test(tool.name) || tool.name.length > 64)
    fail(
      `${field}: a custom tool's name matches /^[a-zA-Z_][a-zA-Z0-9_-]*$/ (at most 64 characters); prefer a domain prefix such as slack_post`,
    );
  if (taken.has(tool.name))
    fail(
      `${field}: "${tool.name}" is already the name of an executor, a Metnos tool or another custom tool of this agent`,
    );
  if (typeof tool.invoke !== 'function') fail(`${field}: ${tool.name} has no invoke function`);
  if (typeof tool.description !== 'string') fail(`${field}: ${tool.name} needs a description`);
  if (typeof tool.schema !== 'object' || tool.schema === null || Array.isArray(tool.schema))
    fail(`${field}: ${tool.name}'s schema must be a JSON Schema object`);
}

/** The executors an agent is offered: the ones it names (an unknown name throws), else every read-only one. */
function agentExecutors(
  agent: AgentDefinition,
  index: number,
  catalog: readonly VerifiedExecutor[] | undefined,
) {
  if (agent.executors === undefined) {
    return (catalog ?? []).filter((executor) => !executor.manifest.contract.side_effects);
  }
  const field = `agents[${index}].executors`;
  if (agent.executors.length > 0 && !catalog)
    throw new AgentConfigError({
      field,
      message: `${field}: agent ${agent.id} names executors, but the runtime has none`,
    });
  return agent.executors.map((name) => {
    const executor = catalog!.find((candidate) => candidate.name === name);
    if (!executor)
      throw new AgentConfigError({
        field,
        message: `${field}: agent ${agent.id} names the executor "${name}", which the catalog does not hold`,
      });
    return executor;
  });
}

/**
 * The tools of one agent, checked when the runtime is built: executors it
 * names must exist (left out: the read-only ones; one with side effects only
 * when named), and custom tools must have a proper name that collides with no
 * executor of the catalog, no Metnos tool and no other custom tool of the agent.
 *
 * @example
 * const tools = agentTools(agent, 0, catalog.executors()); // Map name → tool
 */
export function agentTools(
  agent: AgentDefinition,
  index: number,
  catalog: readonly VerifiedExecutor[] | undefined,
): Map<string, AgentTool> {
  const tools = new Map<string, AgentTool>();
  for (const executor of agentExecutors(agent, index, catalog))
    tools.set(executor.name, { kind: 'executor', spec: toolSpec(executor), executor });
  const taken = new Set([...(catalog ?? []).map((executor) => executor.name), ...RESERVED_TOOL_NAMES]);
  for (const [position, tool] of (agent.customTools ?? []).entries()) {
    const field = `agents[${index}].customTools[${position}]`;
    checkCustomTool(tool, field, taken);
    taken.add(tool.name);
    tools.set(tool.name, {
      kind: 'custom',
      spec: { name: tool.name, description: tool.description, parameters: { ...tool.schema } },
      tool,
    });
  }
  return tools;
}

/**
 * A custom tool's return value as the text of the model's tool message: JSON,
 * with a `BigInt` as its digits, a repeated reference as `"[Circular]"`, and
 * functions and symbols dropped; a string as it is; nothing as `null`.
 *
 * @example
 * toolResultText({ id: 10n }); // '{"id":"10"}'
 */
export function toolResultText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return 'null';
  const ancestors: unknown[] = [];
  const text = JSON.stringify(value, function (this: unknown, _key, item: unknown) {
    if (typeof item === 'bigint') return item.toString();
    if (typeof item === 'function' || typeof item === 'symbol') return undefined;
    if (typeof item !== 'object' || item === null) return item;
    // `this` is the object holding `item`: drop the ancestors that are not on its path
    while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
    if (ancestors.includes(item)) return '[Circular]';
    ancestors.push(item);
    return item;
  });
  return text ?? 'null';
}
