import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  CompleteRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import manifest from '../../package.json' with { type: 'json' };
import type { McpCallOutcome, McpCallPath } from './call-path.ts';
import { activeExecutors, type McpCatalog, mcpToolOf } from './tools.ts';

/** Settings of {@link createMcpServer}. */
export interface McpServerSettings {
  path: McpCallPath;
  catalog: McpCatalog;
  /** The session calls are bound to (the HTTP session id, or one id per stdio process). */
  session: () => string;
  /** How the person approves a held call, in the words of this transport (the console, or the CLI). */
  approveHint: (approvalId: string) => string;
}

/** Client names are the client's own words: one line, at most 64 characters. */
function clientName(name: unknown): string {
  const text = typeof name === 'string' ? name.replace(/[^\x20-\x7e]/g, '?').slice(0, 64) : '';
  return text.trim() === '' ? 'unknown' : text;
}

function textResult(text: string, extra: Partial<CallToolResult> = {}): CallToolResult {
  return { content: [{ type: 'text', text }], ...extra };
}

/** An outcome of the call path as MCP says it: refusals as typed protocol errors, the rest as tool results. */
export function toolResultOf(
  outcome: McpCallOutcome,
  approveHint: (approvalId: string) => string,
): CallToolResult {
  switch (outcome.kind) {
    case 'refused':
      throw new McpError(ErrorCode.InvalidParams, outcome.message, { metnos: outcome.code });
    case 'blocked':
      return textResult(`Not run: blocked by the ${outcome.blockedBy}: ${outcome.reason}`, {
        isError: true,
        _meta: { 'metnos/blocked': { by: outcome.blockedBy } },
      });
    case 'denied':
      return textResult(
        `Not run: the person refused this call (approval ${outcome.approvalId}). Calling again asks them again.`,
        { isError: true, _meta: { 'metnos/approval': { approvalId: outcome.approvalId, state: 'denied' } } },
      );
    case 'needs_approval':
      return textResult(
        `Needs approval: ${outcome.tool} has side effects and cannot be repeated safely, so the person must approve this exact call before it runs; nothing ran. Approval id ${outcome.approvalId}, call hash ${outcome.callHash}, valid until ${outcome.expiresAt}. ${approveHint(outcome.approvalId)} Then call ${outcome.tool} again with the same arguments.`,
        {
          isError: true,
          _meta: {
            'metnos/approval': {
              approvalId: outcome.approvalId,
              callHash: outcome.callHash,
              expiresAt: outcome.expiresAt,
              state: 'pending',
            },
          },
        },
      );
    case 'result': {
      const { result, executor } = outcome;
      if (!result.ok)
        return textResult(`${result.error.class}: ${result.error.message}`, {
          isError: true,
          _meta: { 'metnos/error': { class: result.error.class } },
        });
      const content = result.content;
      const structured =
        content !== null &&
        typeof content === 'object' &&
        !Array.isArray(content) &&
        mcpToolOf(executor).outputSchema
          ? { structuredContent: content as Record<string, unknown> }
          : {};
      return textResult(JSON.stringify(content ?? null), structured);
    }
  }
}

/**
 * An MCP server (the official SDK's `Server`) over the catalog's active
 * executors: `tools/list` lists them with their input and output JSON
 * Schemas; `tools/call` goes through {@link createMcpCallPath}'s checked
 * path. Unknown, archived or quarantined tools and hostile arguments are
 * `InvalidParams` protocol errors that never echo the name asked for;
 * executor failures, vaglio blocks and calls waiting for approval are tool
 * results with `isError`. It also answers `logging/setLevel` and
 * `completion/complete` (no prompts or resources: always empty).
 *
 * @example
 * const server = createMcpServer({ path, catalog, session: () => 'stdio', approveHint: (id) => `Run metnos mcp approve ${id}.` });
 * await server.connect(new StdioServerTransport());
 */
export function createMcpServer(settings: McpServerSettings): Server {
  const server = new Server(
    { name: 'metnos', title: 'Metnos executors', version: manifest.version },
    {
      capabilities: { tools: { listChanged: false }, logging: {}, completions: {} },
      instructions:
        'Each tool is a signed Metnos executor that runs in a sandbox. Calls with side effects that cannot be repeated safely need the person to approve them first: such a call answers "Needs approval" with an approval id; call again once they have approved.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: activeExecutors(settings.catalog).map(mcpToolOf),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const caller = { client: clientName(server.getClientVersion()?.name), session: settings.session() };
    const outcome = await settings.path.call(
      request.params.name,
      request.params.arguments ?? {},
      caller,
      extra.signal,
    );
    return toolResultOf(outcome, settings.approveHint);
  });
  server.setRequestHandler(CompleteRequestSchema, async () => ({
    completion: { values: [], total: 0, hasMore: false },
  }));
  return server;
}
