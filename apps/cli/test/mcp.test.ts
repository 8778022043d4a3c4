import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOllamaServer } from '@metnos/planner/test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, repoRoot, STACK_LINE } from './__fixtures__/cli.ts';

const HAS_BUBBLEWRAP = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'].some((path) =>
  existsSync(path),
);
const MAIN = join(repoRoot, 'apps', 'cli', 'src', 'main.ts');
/** The real filesystem MCP server from npm, as installed for these tests. */
const FILESYSTEM_SERVER = join(
  createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/package.json'),
  '..',
  'dist',
  'index.js',
);
const savedEnv = { ...process.env };

/** The CLI as its own process, with `env` on top of this one's: the home a person runs it with. */
function metnos(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
    const merged: Record<string, string | undefined> = { ...process.env, ...env };
    delete merged.npm_lifecycle_event;
    const child = spawn(
      process.execPath,
      ['--conditions=metnos-source', '--disable-warning=ExperimentalWarning', MAIN, ...args],
      { env: merged, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.stderr.on('data', (chunk) => {
      err += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

const textOf = (result: unknown) =>
  (((result as { content?: unknown }).content ?? []) as Array<{ text?: string }>)
    .map((part) => part.text ?? '')
    .join('');

async function writeConfig(dir: string, lines: string[]) {
  await writeFile(
    join(dir, 'metnos.toml'),
    [
      '[workspace]',
      ...lines,
      `trusted_keys = ["${join(repoRoot, 'keys', 'metnos-release.pub')}"]`,
      '',
      '[runtime]',
      'data_dir = "data"',
      '',
    ].join('\n'),
  );
}

describe.skipIf(!HAS_BUBBLEWRAP)('metnos mcp on stdio (needs bubblewrap)', () => {
  let work: string;
  let client: Client;

  beforeAll(async () => {
    work = await realpath(await mkdtemp(join(tmpdir(), 'metnos-mcp-stdio-')));
    await mkdir(join(work, 'workspace', 'notes'), { recursive: true });
    await writeFile(join(work, 'workspace', 'notes', 'todo.md'), 'buy milk\ncall Ada\n');
    await writeConfig(work, ['root = "workspace"', `executors = "${join(repoRoot, 'executors')}"`]);
    const env = { ...process.env, INIT_CWD: work, METNOS_CONFIG_DIR: join(work, 'config') } as Record<
      string,
      string
    >;
    delete env.npm_lifecycle_event;
    client = new Client({ name: 'stdio-test', version: '1.0.0' });
    // the real command, as an MCP client starts it: a child process speaking on stdin and stdout
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--conditions=metnos-source', '--disable-warning=ExperimentalWarning', MAIN, 'mcp'],
        cwd: work,
        env,
        stderr: 'ignore',
      }),
    );
    process.env.INIT_CWD = work;
    delete process.env.npm_lifecycle_event;
    process.env.METNOS_CONFIG_DIR = join(work, 'config');
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    process.env = { ...savedEnv };
    await rm(work, { recursive: true, force: true });
  });

  it('lists the seeds and runs fs_read in the sandbox, with an audit line whose caller is the client', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['fs_read', 'fs_write', 'time_now']),
    );
    const read = await client.callTool({ name: 'fs_read', arguments: { path: 'notes/todo.md' } });
    expect(read.isError, textOf(read)).toBeFalsy();
    expect(textOf(read)).toContain('call Ada');
    const audit = join(work, 'workspace', '.audit', 'executors');
    const lines = readdirSync(audit).flatMap((file) =>
      readFileSync(join(audit, file), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line: string) => JSON.parse(line)),
    );
    expect(lines.find((line) => line.executor === 'fs_read')).toMatchObject({
      caller: { kind: 'mcp', client: 'stdio-test' },
      isolation: 'full',
    });
  });

  it('holds fs_write until the person approves it with metnos mcp approve, then runs it once', async () => {
    const args = { path: 'notes/from-mcp.md', content: 'written through MCP\n' };
    const first = await client.callTool({ name: 'fs_write', arguments: args });
    const approval = (first._meta as Record<string, { approvalId: string; callHash: string }>)[
      'metnos/approval'
    ]!;
    expect(textOf(first)).toContain(`metnos mcp approve ${approval.approvalId}`);
    expect(existsSync(join(work, 'workspace', 'notes', 'from-mcp.md'))).toBe(false);

    const listed = await cli(['mcp', 'approvals']);
    expect(listed.out).toContain(approval.approvalId);
    expect(listed.out).toContain('notes/from-mcp.md');
    expect(listed.out).toContain(approval.callHash);
    const wrongHash = await cli(['mcp', 'approve', approval.approvalId, '--hash', 'a'.repeat(64)]);
    expect(wrongHash.code).toBe(1);
    expect(wrongHash.err).not.toMatch(STACK_LINE);
    expect((await client.callTool({ name: 'fs_write', arguments: args })).isError).toBe(true);

    const approved = await cli(['mcp', 'approve', approval.approvalId, '--hash', approval.callHash]);
    expect(approved.code, approved.err).toBe(0);
    const done = await client.callTool({ name: 'fs_write', arguments: args });
    expect(done.isError, textOf(done)).toBeFalsy();
    expect(await readFile(join(work, 'workspace', 'notes', 'from-mcp.md'), 'utf8')).toBe(
      'written through MCP\n',
    );
    const again = await client.callTool({ name: 'fs_write', arguments: args });
    expect(textOf(again)).toContain('Needs approval');
    expect((await cli(['mcp', 'approve', approval.approvalId])).code).toBe(1);
  });

  it('answers hostile arguments and tricky names with typed errors, and keeps serving', async () => {
    let deep: unknown = 1;
    for (let level = 0; level < 80; level++) deep = [deep];
    for (const [name, args] of [
      ['json_query', { value: deep }],
      ['../fs_read', {}],
      ['fs_read/../../x', {}],
    ] as const) {
      const error = await client.callTool({ name, arguments: args as Record<string, unknown> }).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error, name).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    }
    expect((await client.callTool({ name: 'time_now', arguments: {} })).isError).toBeFalsy();
  });
});

describe.skipIf(!HAS_BUBBLEWRAP)(
  'metnos mcp wrap: the real filesystem MCP server as signed executors (needs bubblewrap)',
  () => {
    let work: string;
    let home: string;
    let model: Awaited<ReturnType<typeof startOllamaServer>>;
    let env: Record<string, string>;
    const run = (args: string[]) => metnos(args, env);

    beforeAll(async () => {
      work = await realpath(await mkdtemp(join(tmpdir(), 'metnos-mcp-wrap-')));
      home = join(work, 'home');
      await mkdir(join(home, 'notes'), { recursive: true });
      await mkdir(join(home, '.ssh'), { recursive: true });
      await mkdir(join(home, 'ws'), { recursive: true });
      await mkdir(join(work, 'outside'), { recursive: true });
      await mkdir(join(work, 'executors'), { recursive: true });
      await writeFile(join(home, 'notes', 'note.txt'), 'the password of the shed is heliotrope\n');
      await writeFile(join(home, '.ssh', 'id_rsa'), 'PRIVATE-KEY-MATERIAL\n');
      await writeFile(join(work, 'outside', 'secret.txt'), 'OUTSIDE-SECRET\n');
      model = await startOllamaServer();
      await writeConfig(work, [`root = "${join(home, 'ws')}"`, 'executors = "executors"']);
      await writeFile(
        join(work, 'metnos.toml'),
        `${await readFile(join(work, 'metnos.toml'), 'utf8')}\n[runtime.llm.fast]\nprovider = "ollama"\nmodel = "qwen3:8b"\nbase_url = "${model.url}"\nthink = false\n`,
      );
      // the person's home is the folder the server may read: its secrets are the sandbox's to hide
      env = {
        HOME: home,
        XDG_STATE_HOME: join(work, 'state'),
        INIT_CWD: work,
        METNOS_CONFIG_DIR: join(work, 'config'),
      };
      expect((await run(['keys', 'init'])).code).toBe(0);
    }, 120_000);

    afterAll(async () => {
      await model?.close();
      await rm(work, { recursive: true, force: true });
    });

    it('shows the profile, lists the tools inside the sandbox and writes executors signed with the person key', async () => {
      const wrapped = await run([
        'mcp',
        'wrap',
        '--yes',
        '--read',
        home,
        '--write',
        join(home, 'notes'),
        '--',
        'node',
        FILESYSTEM_SERVER,
        home,
      ]);
      expect(wrapped.code, wrapped.err).toBe(0);
      expect(wrapped.out).toContain('proposed profile');
      expect(wrapped.out).toMatch(/network: +none/);
      expect(wrapped.out).toContain('filesystem_read_text_file');
      const manifest = await readFile(
        join(work, 'executors', 'filesystem_read_text_file', 'manifest.toml'),
        'utf8',
      );
      expect(manifest).toContain('created_by = "user"');
      expect(manifest).toContain(`write = ["${join(home, 'notes')}"]`);
      const main = await readFile(join(work, 'executors', 'filesystem_read_text_file', 'main.ts'), 'utf8');
      expect([...main.matchAll(/from '([^']+)'/g)].map((match) => match[1])).toEqual([
        'node:child_process',
        '@metnos/executor-sdk/define',
      ]);
      const listed = await run(['executor', 'list']);
      expect(listed.out).toMatch(/filesystem_read_text_file\s+1\.0\.0\s+active/);
      // signed with the person's key, never the release key: the catalog verifies it with theirs
      expect((await run(['executor', 'verify', 'filesystem_read_text_file'])).out).toMatch(
        /^ok .* signed by ed25519:/m,
      );
    });

    it('answers a Metnos turn through a wrapped tool', async () => {
      model.push(
        { text: '{"verb":"read","object":"file","qualifiers":["note"]}' },
        {
          text: JSON.stringify({
            steps: [{ tool: 'filesystem_read_text_file', args: { path: join(home, 'notes', 'note.txt') } }],
            final_message: 'Your note says: ${step1.content.text}',
          }),
        },
      );
      const turn = await run(['ask', 'read the text file note.txt in my notes']);
      expect(turn.code, `${turn.out}\n${turn.err}`).toBe(0);
      expect(turn.out).toContain('Your note says: the password of the shed is heliotrope');
    });

    it('keeps ~/.ssh, the workspace audit and folders outside the profile forbidden, even where the server allows them', async () => {
      // the same server outside the sandbox, told the same folder, would hand them over
      const bare = new Client({ name: 'bare', version: '1.0.0' });
      await bare.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [FILESYSTEM_SERVER, home],
          stderr: 'ignore',
        }),
      );
      try {
        expect(
          textOf(
            await bare.callTool({
              name: 'read_text_file',
              arguments: { path: join(home, '.ssh', 'id_rsa') },
            }),
          ),
        ).toContain('PRIVATE-KEY-MATERIAL');
        expect(
          textOf(
            await bare.callTool({ name: 'search_files', arguments: { path: home, pattern: '**/id_rsa' } }),
          ),
        ).toContain('id_rsa');
      } finally {
        await bare.close();
      }
      const audit = join(home, 'ws', '.audit', 'executors');
      const auditFile = join(audit, readdirSync(audit)[0]!);
      for (const path of [join(home, '.ssh', 'id_rsa'), auditFile, join(work, 'outside', 'secret.txt')]) {
        const refused = await run([
          'executor',
          'run',
          'filesystem_read_text_file',
          '--args',
          JSON.stringify({ path }),
        ]);
        expect(refused.out, path).toContain('PolicyViolation');
        expect(`${refused.out}${refused.err}`).not.toMatch(/PRIVATE-KEY|OUTSIDE-SECRET|"executor":/);
      }
      // a path the policy lets through (the home, which the profile grants): inside the sandbox the
      // server itself cannot see the masked secrets, whatever it is told
      const search = await run([
        'executor',
        'run',
        'filesystem_search_files',
        '--args',
        JSON.stringify({ path: home, pattern: '**/id_rsa' }),
      ]);
      expect(search.out).toContain('"ok": true');
      expect(search.out).not.toContain('id_rsa');
      const tree = await run([
        'executor',
        'run',
        'filesystem_directory_tree',
        '--args',
        JSON.stringify({ path: home }),
      ]);
      expect(tree.out).toContain('note.txt');
      expect(tree.out).not.toContain('id_rsa');
      expect(tree.out).not.toMatch(/\d{4}-\d{2}-\d{2}\.jsonl/);
    });

    it('refuses the release key and a target it cannot confine, writing nothing', async () => {
      // a key of the person's store that bears the release key's name is not theirs to sign with here
      expect((await run(['keys', 'init', '--name', 'metnos-release'])).code).toBe(0);
      const release = await run([
        'mcp',
        'wrap',
        '--yes',
        '--key',
        'metnos-release',
        '--',
        'node',
        FILESYSTEM_SERVER,
      ]);
      expect(release.code).toBe(2);
      expect(release.err).toContain('release key');
      expect(release.err).not.toMatch(STACK_LINE);
      for (const target of [
        ['../../bin/sh'],
        ['ls;rm'],
        ['https://user:pw@example.com/mcp'],
        ['nonexistent-binary-x'],
      ]) {
        const refused = await run(['mcp', 'wrap', '--yes', '--', ...target]);
        expect(refused.code, target.join(' ')).toBe(2);
        expect(refused.err).not.toMatch(STACK_LINE);
      }
    });
  },
);

describe.skipIf(!HAS_BUBBLEWRAP)(
  'metnos mcp wrap of a remote server: only through the egress proxy (needs bubblewrap)',
  () => {
    let work: string;
    let remote: ReturnType<typeof createServer>;
    let env: Record<string, string>;
    const run = (args: string[]) => metnos(args, env);
    const seen: string[] = [];

    beforeAll(async () => {
      work = await realpath(await mkdtemp(join(tmpdir(), 'metnos-mcp-remote-')));
      await mkdir(join(work, 'executors'), { recursive: true });
      // a streamable-HTTP MCP server on loopback, one stateless transport per request
      remote = createServer(async (request, response) => {
        seen.push(`${request.method} ${request.headers.host}`);
        const server = new Server({ name: 'shouter', version: '1.0.0' }, { capabilities: { tools: {} } });
        server.setRequestHandler(ListToolsRequestSchema, async () => ({
          tools: [
            {
              name: 'shout',
              description: 'Says the text in capitals',
              inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
              annotations: { readOnlyHint: true },
            },
          ],
        }));
        server.setRequestHandler(CallToolRequestSchema, async (call) => ({
          content: [{ type: 'text', text: String(call.params.arguments?.text ?? '').toUpperCase() }],
        }));
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        await server.connect(transport);
        await transport.handleRequest(request, response);
      });
      await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', () => resolve()));
      const port = (remote.address() as { port: number }).port;
      await writeConfig(work, ['root = "workspace"', 'executors = "executors"']);
      // the operator maps the server's name to the loopback test server, as for any egress
      await writeFile(
        join(work, 'metnos.toml'),
        `${await readFile(join(work, 'metnos.toml'), 'utf8')}\n[sandbox]\nhost_overrides = { "mcp.example.com" = "127.0.0.1:${port}" }\n`,
      );
      env = {
        HOME: join(work, 'home'),
        XDG_STATE_HOME: join(work, 'state'),
        INIT_CWD: work,
        METNOS_CONFIG_DIR: join(work, 'config'),
      };
      await mkdir(env.HOME!, { recursive: true });
      expect((await run(['keys', 'init'])).code).toBe(0);
    }, 120_000);

    afterAll(async () => {
      remote?.closeAllConnections();
      await new Promise((resolve) => remote?.close(resolve));
      await rm(work, { recursive: true, force: true });
    });

    it('wraps its tools with a profile that reaches its host alone, and calls them through the proxy', async () => {
      const wrapped = await run(['mcp', 'wrap', '--yes', '--name', 'remote', 'http://mcp.example.com/mcp']);
      expect(wrapped.code, wrapped.err).toBe(0);
      expect(wrapped.out).toMatch(/network: +mcp\.example\.com/);
      expect(wrapped.out).toMatch(/read: +nothing/);
      const manifest = await readFile(join(work, 'executors', 'remote_shout', 'manifest.toml'), 'utf8');
      expect(manifest).toContain('domains = ["mcp.example.com"]');
      expect(manifest).toContain('mode = "none"');
      // the wrapped tool is an executor like any other: here it is offered again over MCP, by metnos mcp
      const client = new Client({ name: 'remote-test', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: ['--conditions=metnos-source', '--disable-warning=ExperimentalWarning', MAIN, 'mcp'],
          cwd: work,
          env: { ...(process.env as Record<string, string>), ...env, npm_lifecycle_event: 'test' },
          stderr: 'ignore',
        }),
      );
      try {
        const called = await client.callTool({ name: 'remote_shout', arguments: { text: 'hello' } });
        expect(called.isError, textOf(called)).toBeFalsy();
        expect(called.structuredContent).toMatchObject({ text: 'HELLO' });
      } finally {
        await client.close();
      }
      // every request reached the server through the proxy, under the allow-listed name
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.every((line) => line.endsWith('mcp.example.com'))).toBe(true);
    });
  },
);
