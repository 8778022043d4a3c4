import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Context, Hono } from 'hono';
import type { RouteDoc } from '../openapi.ts';
import { readCapped } from '../routes/common.ts';
import type { McpCallPath } from './call-path.ts';
import { createMcpServer } from './server.ts';
import type { McpCatalog } from './tools.ts';

/** What {@link registerMcpRoute} needs. */
export interface McpRouteDeps {
  path: McpCallPath;
  catalog: McpCatalog;
  /**
   * Host names (without port) a request's `Host` and `Origin` may name: the
   * defence against DNS rebinding. Default: `localhost`, `127.0.0.1`, `[::1]`.
   */
  allowedHosts?: readonly string[];
  /** Sessions at once; the oldest is closed to make room (default 32). */
  maxSessions?: number;
}

/** A POST body of `/mcp` may be at most this large. */
export const MAX_MCP_BODY_BYTES = 1024 * 1024;

/** The route {@link registerMcpRoute} mounts, for the OpenAPI document. */
export const mcpRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/mcp',
    summary: "MCP over streamable HTTP: the catalog's active executors as tools",
    description:
      'JSON-RPC 2.0 as the Model Context Protocol defines it; a session starts with `initialize` and its id comes back in `Mcp-Session-Id`. A `Host` or `Origin` that is not this machine is 403. Calls of executors with side effects that are not idempotent answer "needs approval" with an approval id, listed by `GET /api/approvals`.',
    refusals: [400, 404, 413],
    produces: ['application/json', 'text/event-stream'],
  },
  {
    method: 'get',
    path: '/mcp',
    summary: "an MCP session's stream of server messages (`Mcp-Session-Id`)",
    refusals: [400, 404],
    produces: ['text/event-stream'],
  },
  {
    method: 'delete',
    path: '/mcp',
    summary: 'ends an MCP session (`Mcp-Session-Id`)',
    refusals: [400, 404],
  },
];

function jsonRpcError(c: Context, status: 400 | 403 | 404 | 413, code: number, message: string) {
  return c.json({ jsonrpc: '2.0', error: { code, message }, id: null }, status);
}

/** The host name of a `Host` header or an origin URL, lower case, IPv6 in brackets. */
function hostNameOf(value: string): string | undefined {
  try {
    return new URL(value.includes('://') ? value : `http://${value}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

function isInitialize(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some(
    (message) =>
      message !== null &&
      typeof message === 'object' &&
      (message as { method?: unknown }).method === 'initialize',
  );
}

/**
 * Mounts `/mcp` (streamable HTTP, the official SDK's web-standard transport)
 * on `app`, behind the app's bearer token. Each `initialize` opens a session
 * with its own MCP server; later requests carry `Mcp-Session-Id`. `Host` and
 * `Origin` must name this machine (or an allowed host). Returns `close`,
 * which ends every session (their event streams too), for a graceful stop.
 *
 * @example
 * const mcp = registerMcpRoute(app, { path, catalog });
 * // on shutdown
 * await mcp.close();
 */
export function registerMcpRoute(app: Hono, deps: McpRouteDeps) {
  const allowed = new Set(
    (deps.allowedHosts ?? ['localhost', '127.0.0.1', '[::1]']).map((host) => host.toLowerCase()),
  );
  const maxSessions = deps.maxSessions ?? 32;
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();

  async function open(c: Context, body: unknown) {
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
        while (sessions.size > maxSessions) {
          const [oldest, evicted] = sessions.entries().next().value!;
          sessions.delete(oldest);
          void evicted.close().catch(() => undefined);
        }
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
      maxRequestBodySize: MAX_MCP_BODY_BYTES,
    });
    const server = createMcpServer({
      path: deps.path,
      catalog: deps.catalog,
      session: () => transport.sessionId ?? 'http',
      approveHint: (id) =>
        `Ask the person to approve it in the Metnos console, or with POST /api/approvals/${id} and the call hash.`,
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    return transport.handleRequest(c.req.raw, { parsedBody: body });
  }

  app.on(['GET', 'POST', 'DELETE'], '/mcp', async (c) => {
    // DNS rebinding: a page elsewhere must not reach this server through a name that resolves here
    const host = hostNameOf(c.req.header('host') ?? '');
    const origin = c.req.header('origin');
    if (!host || !allowed.has(host) || (origin !== undefined && !allowed.has(hostNameOf(origin) ?? '')))
      return jsonRpcError(c, 403, -32000, 'this host or origin may not use the MCP endpoint');
    const sessionId = c.req.header('mcp-session-id');
    if (sessionId !== undefined) {
      const transport = sessions.get(sessionId);
      if (!transport) return jsonRpcError(c, 404, -32001, 'session not found; initialize a new one');
      return transport.handleRequest(c.req.raw);
    }
    if (c.req.method !== 'POST') return jsonRpcError(c, 400, -32000, 'no session: send initialize first');
    const text = await readCapped(c.req.raw, MAX_MCP_BODY_BYTES);
    if (text === undefined) return jsonRpcError(c, 413, -32600, 'the body is too large');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return jsonRpcError(c, 400, -32700, 'the body is not JSON');
    }
    if (!isInitialize(body)) return jsonRpcError(c, 400, -32000, 'no session: send initialize first');
    return open(c, body);
  });

  return {
    /** Sessions open now. */
    sessions: () => sessions.size,
    /** Ends every session and its streams. */
    async close(): Promise<void> {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(open.map((transport) => transport.close()));
    },
  };
}
