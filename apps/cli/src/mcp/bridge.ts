/**
 * Where a wrapped MCP server is: a command started inside the executor's
 * sandbox (`node` means the Node that runs the executor), or a streamable-HTTP
 * URL reached through the egress proxy.
 */
export type BridgeServer =
  | { kind: 'stdio'; command: string; args: string[]; cwd?: string }
  | { kind: 'http'; url: string };

/**
 * The code of a wrapped tool's executor: one standalone `main.ts` that
 * imports only `node:` built-ins and `@metnos/executor-sdk/define`, and speaks
 * MCP's JSON-RPC itself — over the server process's stdio (newline-delimited
 * messages), or over streamable HTTP (JSON or server-sent events, with the
 * session id). It initializes, calls its one tool (or, with `tool: null`,
 * lists the tools: how `metnos mcp wrap` asks a server inside the sandbox),
 * and stops the server. Messages are read with caps; a tool's `isError` is
 * `ToolError`, a server that dies or speaks something else is `ServerFailed`
 * or `ProtocolError`.
 *
 * @example
 * await writeFile(join(dir, 'main.ts'), bridgeSource({ server: { kind: 'stdio', command: 'node', args: [script, folder] }, tool: 'read_file' }));
 */
export function bridgeSource(settings: { server: BridgeServer; tool: string | null }): string {
  return BRIDGE.replace('__SERVER__', JSON.stringify(settings.server)).replace(
    '__TOOL__',
    JSON.stringify(settings.tool),
  );
}

const BRIDGE = `// A bridge to one tool of an MCP server, written by \`metnos mcp wrap\`. The server runs inside
// this executor's sandbox (stdio) or is reached through the egress proxy (HTTP); this file speaks
// MCP's JSON-RPC itself, with nothing but Node's built-ins.
import { spawn } from 'node:child_process';
import { defineExecutor, ExecutorFailure, ok } from '@metnos/executor-sdk/define';

type Server =
  | { kind: 'stdio'; command: string; args: string[]; cwd?: string }
  | { kind: 'http'; url: string };

const SERVER: Server = __SERVER__;
const TOOL: string | null = __TOOL__;
const PROTOCOL = '2025-06-18';
/** One message, and all of a server's output, may be at most this large. */
const MAX_BYTES = 8 * 1024 * 1024;
const MAX_TEXT = 1024 * 1024;

interface Reply {
  id?: unknown;
  method?: string;
  result?: unknown;
  error?: { code?: unknown; message?: unknown };
}

interface Channel {
  request(method: string, params: unknown): Promise<unknown>;
  notify(method: string, params: unknown): Promise<void>;
  close(): Promise<void>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function asReply(text: string): Reply | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isRecord(value) ? (value as Reply) : undefined;
}

function resultOf(reply: Reply): unknown {
  if (reply.error !== undefined) {
    const message = isRecord(reply.error) && typeof reply.error.message === 'string' ? reply.error.message : 'an error';
    throw new ExecutorFailure('ProtocolError', \`the MCP server answered with an error: \${message.slice(0, 500)}\`);
  }
  return reply.result;
}

/** The server as a child process inside this sandbox, spoken to over its stdin and stdout. */
function stdioChannel(server: Extract<Server, { kind: 'stdio' }>): Channel {
  const command = server.command === 'node' ? process.execPath : server.command;
  const child = spawn(command, server.args, {
    cwd: server.cwd,
    env: process.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const waiting = new Map<number, { resolve(reply: Reply): void; reject(error: Error): void }>();
  let buffer = '';
  let received = 0;
  let ended: Error | undefined;
  const fail = (error: Error) => {
    ended ??= error;
    for (const entry of waiting.values()) entry.reject(error);
    waiting.clear();
  };
  child.on('error', () => fail(new ExecutorFailure('ServerFailed', \`the MCP server could not be started (\${server.command})\`)));
  child.on('exit', (code, signal) =>
    fail(new ExecutorFailure('ServerFailed', \`the MCP server exited before answering (\${signal ?? \`exit code \${code}\`})\`)),
  );
  child.stdin.on('error', () => undefined);
  // what the server logs is its own business: read and dropped, never returned
  child.stderr.resume();
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    received += chunk.length;
    if (received > MAX_BYTES) {
      fail(new ExecutorFailure('ProtocolError', 'the MCP server wrote more than 8 MiB'));
      child.kill('SIGKILL');
      return;
    }
    buffer += chunk;
    let newline = buffer.indexOf('\\n');
    while (newline >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\\n');
      if (!line) continue;
      const reply = asReply(line);
      if (!reply) continue;
      if (typeof reply.method === 'string') {
        // a request of the server's (roots, sampling, …): this client offers none of them
        if (reply.id !== undefined)
          write({ jsonrpc: '2.0', id: reply.id, error: { code: -32601, message: 'not offered by this client' } });
        continue;
      }
      if (typeof reply.id === 'number') {
        waiting.get(reply.id)?.resolve(reply);
        waiting.delete(reply.id);
      }
    }
  });
  const write = (message: unknown) => {
    if (!child.stdin.destroyed) child.stdin.write(\`\${JSON.stringify(message)}\\n\`);
  };
  let next = 1;
  return {
    request(method, params) {
      if (ended) return Promise.reject(ended);
      const id = next++;
      return new Promise<Reply>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        write({ jsonrpc: '2.0', id, method, params });
      }).then(resultOf);
    },
    async notify(method, params) {
      write({ jsonrpc: '2.0', method, params });
    },
    async close() {
      child.stdin.end();
      if (child.exitCode === null) child.kill('SIGTERM');
    },
  };
}

/** Reads a response body, at most MAX_BYTES. */
async function readCapped(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (text.length > MAX_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new ExecutorFailure('ProtocolError', 'the MCP server answered more than 8 MiB');
    }
  }
  return text + decoder.decode();
}

/** The JSON-RPC reply with this id in a JSON body or a stream of server-sent events. */
function replyIn(text: string, contentType: string, id: number): Reply | undefined {
  const candidates: string[] = [];
  if (contentType.includes('text/event-stream')) {
    for (const event of text.split(/\\r?\\n\\r?\\n/)) {
      const data = event
        .split(/\\r?\\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\\n');
      if (data) candidates.push(data);
    }
  } else candidates.push(text);
  for (const candidate of candidates) {
    const reply = asReply(candidate);
    if (reply && reply.id === id) return reply;
  }
  return undefined;
}

/** The server over streamable HTTP, through the sandbox's egress proxy. */
function httpChannel(server: Extract<Server, { kind: 'http' }>): Channel {
  let session: string | undefined;
  let next = 1;
  const headers = () => ({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': PROTOCOL,
    ...(session ? { 'mcp-session-id': session } : {}),
  });
  const post = async (message: unknown) => {
    try {
      return await fetch(server.url, { method: 'POST', headers: headers(), body: JSON.stringify(message), redirect: 'error' });
    } catch {
      throw new ExecutorFailure('Network', 'the MCP server could not be reached');
    }
  };
  return {
    async request(method, params) {
      const id = next++;
      const response = await post({ jsonrpc: '2.0', id, method, params });
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        throw new ExecutorFailure('ServerFailed', \`the MCP server answered HTTP \${response.status}\`);
      }
      session = response.headers.get('mcp-session-id') ?? session;
      const reply = replyIn(await readCapped(response), response.headers.get('content-type') ?? '', id);
      if (!reply) throw new ExecutorFailure('ProtocolError', \`the MCP server did not answer \${method}\`);
      return resultOf(reply);
    },
    async notify(method, params) {
      const response = await post({ jsonrpc: '2.0', method, params });
      await response.body?.cancel().catch(() => undefined);
    },
    async close() {
      if (!session) return;
      await fetch(server.url, { method: 'DELETE', headers: headers() })
        .then((response) => response.body?.cancel())
        .catch(() => undefined);
    },
  };
}

/** A tool result as this executor's content: its text, its parts (binary data left out) and structured content. */
function contentOf(result: unknown) {
  if (!isRecord(result) || !Array.isArray(result.content))
    throw new ExecutorFailure('ProtocolError', 'the MCP server answered tools/call without content');
  const parts = result.content.filter(isRecord).map((part) => ({
    type: typeof part.type === 'string' ? part.type : 'unknown',
    ...(typeof part.text === 'string' ? { text: part.text.slice(0, MAX_TEXT) } : {}),
    ...(typeof part.mimeType === 'string' ? { mimeType: part.mimeType } : {}),
  }));
  const text = parts.flatMap((part) => (part.text === undefined ? [] : [part.text])).join('\\n');
  if (result.isError === true) throw new ExecutorFailure('ToolError', text.slice(0, 2000) || 'the tool failed');
  return {
    text,
    content: parts,
    ...(isRecord(result.structuredContent) ? { structured: result.structuredContent } : {}),
  };
}

export default defineExecutor({
  async run(args: Record<string, unknown>) {
    const channel = SERVER.kind === 'stdio' ? stdioChannel(SERVER) : httpChannel(SERVER);
    try {
      await channel.request('initialize', {
        protocolVersion: PROTOCOL,
        capabilities: {},
        clientInfo: { name: 'metnos-bridge', version: '1.0.0' },
      });
      await channel.notify('notifications/initialized', {});
      if (TOOL === null) {
        const listed = await channel.request('tools/list', {});
        if (!isRecord(listed) || !Array.isArray(listed.tools))
          throw new ExecutorFailure('ProtocolError', 'the MCP server answered tools/list without tools');
        return ok({ tools: listed.tools.filter(isRecord) });
      }
      return ok(contentOf(await channel.request('tools/call', { name: TOOL, arguments: args })));
    } finally {
      await channel.close();
    }
  },
});
`;
