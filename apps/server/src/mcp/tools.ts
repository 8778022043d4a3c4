import { contractSchema, type VerifiedExecutor } from '@metnos/executor-sdk';

/** The part of the catalog MCP reads: the invocable versions and their lifecycle states. */
export interface McpCatalog {
  get(name: string, version?: string): VerifiedExecutor | undefined;
  executors(): VerifiedExecutor[];
  list(): ReadonlyArray<{ name: string; version: string; state: string }>;
}

/** One executor as an MCP tool: what `tools/list` answers. */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema?: { type: 'object'; [key: string]: unknown };
  annotations: {
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint: boolean;
    openWorldHint: boolean;
  };
}

/** Executor names as manifests allow them; anything else never reaches the catalog. */
export const TOOL_NAME = /^[a-z][a-z0-9_]{1,63}$/;

/**
 * The catalog's active executors: invocable default versions whose lifecycle
 * state is `active` (archived, quarantined, fused and below-threshold
 * versions are never offered), sorted by name.
 *
 * @example
 * activeExecutors(catalog).map((executor) => executor.name); // ['fs_read', 'time_now', …]
 */
export function activeExecutors(catalog: McpCatalog): VerifiedExecutor[] {
  const active = new Set(
    catalog
      .list()
      .filter((row) => row.state === 'active')
      .map((row) => `${row.name}@${row.version}`),
  );
  return catalog.executors().filter((executor) => active.has(`${executor.name}@${executor.version}`));
}

/** One of an executor's contract schemas, made to stand alone (its `definitions` beside it when it refers to them). */
function standalone(executor: VerifiedExecutor, which: 'input' | 'output') {
  const node = contractSchema(executor, which);
  if (node?.type !== 'object') return undefined;
  const schema: Record<string, unknown> = { ...node };
  const root = executor.schema as Record<string, unknown>;
  if (JSON.stringify(node).includes('"$ref"')) {
    if (root.definitions) schema.definitions = root.definitions;
    if (root.$defs) schema.$defs = root.$defs;
  }
  return schema as { type: 'object'; [key: string]: unknown };
}

/**
 * An executor as an MCP tool: its name, summary, input JSON Schema, output
 * schema (when its content is an object) and hints read from its contract
 * and profile (read-only without side effects, idempotent as declared, open
 * world when its profile reaches a network).
 *
 * @example
 * mcpToolOf(catalog.get('time_now')!).annotations.readOnlyHint; // true
 */
export function mcpToolOf(executor: VerifiedExecutor): McpTool {
  const { contract, executor: identity, sandbox } = executor.manifest;
  const outputSchema = standalone(executor, 'output');
  return {
    name: executor.name,
    title: `${executor.name} ${executor.version}`,
    description: identity.summary,
    inputSchema: standalone(executor, 'input') ?? { type: 'object' },
    ...(outputSchema ? { outputSchema } : {}),
    annotations: {
      readOnlyHint: !contract.side_effects,
      destructiveHint: contract.side_effects && !contract.idempotent,
      idempotentHint: contract.idempotent,
      openWorldHint: sandbox.network.mode !== 'none',
    },
  };
}
