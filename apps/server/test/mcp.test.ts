import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type createCatalog, receiptsDirOf, verifyReceiptChain } from '@metnos/executor-sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_BUBBLEWRAP, startMcpServer } from './mcp-fixture.ts';
import { TOKEN } from './routes-helpers.ts';

let fixture: Awaited<ReturnType<typeof startMcpServer>>;
let workspace: string;
let root: string;
let catalog: ReturnType<typeof createCatalog>;
let server: Awaited<ReturnType<typeof startMcpServer>>['server'];
let client: Client;
let transport: StreamableHTTPClientTransport;

async function connect(name = 'metnos-test') {
  const next = new Client({ name, version: '1.0.0' });
  const through = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
  });
  await next.connect(through);
  return { client: next, transport: through };
}

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${server.url}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      ...(init.headers ?? {}),
    },
  });

/** A JSON-RPC request as raw text on the session, for what the SDK client would never send. */
async function raw(body: string) {
  const response = await api('/mcp', {
    method: 'POST',
    body,
    headers: {
      accept: 'application/json, text/event-stream',
      'mcp-session-id': transport.sessionId!,
      'mcp-protocol-version': '2025-11-25',
    },
  });
  return { status: response.status, text: await response.text() };
}

const textOf = (result: unknown) =>
  (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>)
    .map((part) => part.text ?? '')
    .join('');

async function auditLines(): Promise<Array<Record<string, unknown>>> {
  const dir = join(workspace, '.audit', 'executors');
  const files = (await readdir(dir)).filter((file) => file.endsWith('.jsonl'));
  const lines: Array<Record<string, unknown>> = [];
  for (const file of files)
    for (const line of (await readFile(join(dir, file), 'utf8')).split('\n'))
      if (line.trim()) lines.push(JSON.parse(line));
  return lines;
}

describe.skipIf(!HAS_BUBBLEWRAP)(
  'MCP over /mcp: the catalog through the checked path (needs bubblewrap)',
  () => {
    beforeAll(async () => {
      fixture = await startMcpServer('mcp-http', ['time_now', 'fs_read', 'fs_write', 'json_query']);
      ({ root, workspace, catalog, server } = fixture);
      ({ client, transport } = await connect());
    });

    afterAll(async () => {
      await client?.close();
      await fixture?.close();
    });

    it('lists the active executors with their schemas, and runs one in the real sandbox with its audit line', async () => {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['fs_read', 'fs_write', 'json_query', 'time_now']);
      const fsRead = tools.find((tool) => tool.name === 'fs_read')!;
      expect(fsRead.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
      expect(fsRead.outputSchema).toMatchObject({ type: 'object' });
      expect(fsRead.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      expect(tools.find((tool) => tool.name === 'fs_write')!.annotations).toMatchObject({
        readOnlyHint: false,
        destructiveHint: true,
      });

      const time = await client.callTool({ name: 'time_now', arguments: { timezone: 'UTC' } });
      expect(time.isError).toBeFalsy();
      expect(time.structuredContent).toMatchObject({ timezone: 'UTC' });

      const read = await client.callTool({ name: 'fs_read', arguments: { path: 'notes/todo.md' } });
      expect(read.isError).toBeFalsy();
      expect(JSON.stringify(read.structuredContent)).toContain('call Ada');
      const lines = await auditLines();
      const line = lines.find((entry) => entry.executor === 'fs_read' && !entry.error_class);
      expect(line).toMatchObject({ caller: { kind: 'mcp', client: 'metnos-test' }, isolation: 'full' });
      expect(String(line?.turn_id)).toBe(`mcp:${transport.sessionId}`);
      // and the invoker's signed receipt, in a chain that verifies
      const chain = await verifyReceiptChain({ dir: receiptsDirOf(workspace), keys: [fixture.receiptKey] });
      expect(chain.status).toBe('ok');
      expect(chain.receipts).toBeGreaterThanOrEqual(2);
      const receipts = (await readdir(receiptsDirOf(workspace))).filter((file) => file.endsWith('.jsonl'));
      const text = (
        await Promise.all(receipts.map((file) => readFile(join(receiptsDirOf(workspace), file), 'utf8')))
      ).join('');
      expect(text).toContain(`"turn_id":"mcp:${transport.sessionId}"`);
      expect(text).toContain('"caller":"mcp"');
    });

    it('asks for the bearer token and refuses a Host or Origin that is not this machine', async () => {
      const init = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      });
      const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
      expect((await fetch(`${server.url}/mcp`, { method: 'POST', body: init, headers })).status).toBe(401);
      const port = new URL(server.url).port;
      for (const extra of [{ host: `evil.example.com:${port}` }, { origin: 'http://evil.example.com' }]) {
        const { request } = await import('node:http');
        const status = await new Promise<number>((resolve, reject) => {
          const sent = request(
            `${server.url}/mcp`,
            { method: 'POST', headers: { ...headers, authorization: `Bearer ${TOKEN}`, ...extra } },
            (response) => {
              response.resume();
              resolve(response.statusCode ?? 0);
            },
          );
          sent.on('error', reject);
          sent.end(init);
        });
        expect(status, JSON.stringify(extra)).toBe(403);
      }
    });

    it('holds a call with side effects for the person, runs it once after the approval, and says when it is denied', async () => {
      const args = { path: 'notes/new.md', content: 'from mcp\n' };
      const first = await client.callTool({ name: 'fs_write', arguments: args });
      expect(first.isError).toBe(true);
      const approval = (first._meta as Record<string, { approvalId: string; callHash: string }>)[
        'metnos/approval'
      ]!;
      expect(textOf(first)).toContain(`Needs approval`);
      expect(textOf(first)).toContain(approval.approvalId);
      expect(textOf(first)).toContain(approval.callHash);
      expect(existsSync(join(workspace, 'notes', 'new.md'))).toBe(false);

      // the console lists it with the exact call; a wrong hash decides nothing
      const listed = (await (await api('/api/approvals')).json()) as {
        approvals: Array<{ id: string; tool: string; args: unknown; callHash: string }>;
      };
      expect(listed.approvals).toEqual([
        expect.objectContaining({
          id: approval.approvalId,
          tool: 'fs_write',
          args,
          callHash: approval.callHash,
        }),
      ]);
      // asking again before the decision opens nothing new
      const again = await client.callTool({ name: 'fs_write', arguments: args });
      expect((again._meta as Record<string, { approvalId: string }>)['metnos/approval']!.approvalId).toBe(
        approval.approvalId,
      );
      const decided = await api(`/api/approvals/${approval.approvalId}`, {
        method: 'POST',
        body: JSON.stringify({ decision: 'approve', callHash: approval.callHash }),
      });
      expect(decided.status).toBe(200);
      expect(await decided.json()).toMatchObject({ mcp: 'approved' });

      // the approval is for this exact call: other arguments still wait
      const other = await client.callTool({ name: 'fs_write', arguments: { ...args, content: 'other\n' } });
      expect(textOf(other)).toContain('Needs approval');
      const done = await client.callTool({ name: 'fs_write', arguments: args });
      expect(done.isError, textOf(done)).toBeFalsy();
      expect(await readFile(join(workspace, 'notes', 'new.md'), 'utf8')).toBe('from mcp\n');
      // once: the same call asks again
      const twice = await client.callTool({ name: 'fs_write', arguments: args });
      const second = (twice._meta as Record<string, { approvalId: string; callHash: string }>)[
        'metnos/approval'
      ]!;
      expect(second.approvalId).not.toBe(approval.approvalId);

      const denied = await api(`/api/approvals/${second.approvalId}`, {
        method: 'POST',
        body: JSON.stringify({ decision: 'deny', callHash: second.callHash }),
      });
      expect(denied.status).toBe(200);
      const refused = await client.callTool({ name: 'fs_write', arguments: args });
      expect(textOf(refused)).toContain('the person refused this call');

      // another session cannot use an approval given to this one
      const other2 = await connect('someone-else');
      try {
        const asked = await client.callTool({ name: 'fs_write', arguments: args });
        const held = (asked._meta as Record<string, { approvalId: string; callHash: string }>)[
          'metnos/approval'
        ]!;
        await api(`/api/approvals/${held.approvalId}`, {
          method: 'POST',
          body: JSON.stringify({ decision: 'approve', callHash: held.callHash }),
        });
        const stolen = await other2.client.callTool({ name: 'fs_write', arguments: args });
        expect(textOf(stolen)).toContain('Needs approval');
      } finally {
        await other2.client.close();
      }
    });

    it('answers hostile arguments with typed errors and keeps serving', async () => {
      let deep: unknown = 'x';
      for (let level = 0; level < 100; level++) deep = { a: deep };
      for (const args of [{ a: deep }, { text: 'x'.repeat(300 * 1024) }]) {
        const error = await client
          .callTool({ name: 'json_query', arguments: args as Record<string, unknown> })
          .then(
            () => undefined,
            (thrown: unknown) => thrown,
          );
        expect(error).toBeInstanceOf(McpError);
        expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
      }
      const proto = await raw(
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"json_query","arguments":{"value":{"__proto__":{"polluted":true}},"paths":["a"]}}}',
      );
      expect(proto.text).toContain('"code":-32602');
      expect(proto.text).toContain('__proto__');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const notObject = await raw(
        '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"json_query","arguments":[1,2]}}',
      );
      expect(notObject.text).toMatch(/"code":-32602|"code":-32603/);
      expect(notObject.text).not.toMatch(/at .*\.[tj]s:\d+/);
      // still serving
      expect((await client.callTool({ name: 'time_now', arguments: {} })).isError).toBeFalsy();
    });

    it('refuses path tricks in names, archived and edited executors, without echoing the name', async () => {
      for (const name of [
        '../fs_read',
        'fs_read/../../etc',
        'FS_READ',
        'fs_read\u0000',
        'fs_read ',
        '__proto__',
        'constructor',
      ]) {
        const error = await client.callTool({ name, arguments: {} }).then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(error, name).toBeInstanceOf(McpError);
        expect((error as McpError).message).toContain('tool unavailable');
        expect((error as McpError).message).not.toContain(name.trim() || 'x');
      }
      // the vaglio's guard, as for a turn's step
      const guarded = await client.callTool({ name: 'fs_read', arguments: { path: '~/.ssh/id_rsa' } });
      expect(guarded.isError).toBe(true);
      expect(textOf(guarded)).toContain('blocked by the guard');

      // archived after listing: gone from the list and refused
      await catalog.archive('json_query');
      expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('json_query');
      await expect(
        client.callTool({ name: 'json_query', arguments: { value: {}, paths: ['a'] } }),
      ).rejects.toThrow(/tool unavailable/);

      // edited after listing: the call-time re-verification quarantines it, and nothing ran
      const before = (await auditLines()).filter(
        (line) => line.executor === 'time_now' && !line.error_class,
      ).length;
      await writeFile(
        join(root, 'time_now', 'main.ts'),
        `${await readFile(join(root, 'time_now', 'main.ts'), 'utf8')}\n// edited\n`,
      );
      await expect(client.callTool({ name: 'time_now', arguments: {} })).rejects.toThrow(/tool unavailable/);
      expect(catalog.list().find((row) => row.name === 'time_now')?.state).toBe('quarantined');
      expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('time_now');
      const after = (await auditLines()).filter(
        (line) => line.executor === 'time_now' && !line.error_class,
      ).length;
      expect(after).toBe(before);
      const refusal = (await auditLines()).filter(
        (line) => line.executor === 'time_now' && line.error_class === 'NotInvocable',
      );
      expect(refusal.at(-1)).toMatchObject({ caller: { kind: 'mcp', client: 'metnos-test' } });
    });
  },
);
