import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createKeyStore, readPublicKey } from '@metnos/executor-sdk';
import { createSandboxRunner } from '@metnos/sandbox';
import { createMcpCallPath, createMcpServer } from '@metnos/server';
import { callHash, createVaglio } from '@metnos/vaglio';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createSharedApprovals } from '../mcp/shared-approvals.ts';
import {
  describePlan,
  type ListedTool,
  listToolsInSandbox,
  planWrap,
  WrapError,
  wrappedExecutor,
  writeSigned,
} from '../mcp/wrap.ts';
import { CliFailure, type CliIo, table } from '../output.ts';
import { placeProtection } from '../workspace.ts';
import { confirm, runtime } from './ask.ts';

export const MCP_HELP = `metnos mcp — Metnos and the Model Context Protocol, both ways

Usage:
  metnos mcp [--executors <dir>] [--workspace <dir>]
      an MCP server on stdin/stdout: the catalog's active executors as tools, each call through
      the vaglio, the sandbox and the audit log (caller mcp)
  metnos mcp approvals                      the calls an MCP client made that wait for your approval
  metnos mcp approve <id> [--hash <hash>]   approve one, as listed; the client then calls again
  metnos mcp deny <id>                      refuse one
  metnos mcp wrap [options] -- <command> [args…]
  metnos mcp wrap [options] <https://host/mcp>
      lists an MCP server's tools inside the sandbox and writes, per tool, an executor signed with
      your key whose code is a small bridge and whose profile confines the server

Options of wrap:
  --read <dir>      a folder the server may read (repeatable); folders its arguments name are added
  --write <dir>     a folder the server may write (repeatable; nothing is writable otherwise)
  --network <host>  a domain a stdio server may reach through the egress proxy (repeatable)
  --name <prefix>   the executors' names start with it (default: from the package, binary or host)
  --key <name>      your signing key (default "default"; never the release key)
  --yes             approve the profile and the executors without asking (scripts, tests)

Calls with side effects that cannot be repeated safely answer "needs approval" with an approval
id and call hash; \`metnos mcp approvals\` shows the exact call, \`metnos mcp approve <id>\` lets
the client's next identical call run, once. \`metnos serve\` offers the same tools at /mcp
(streamable HTTP, bearer token), whose approvals are in GET /api/approvals and the console.
`;

/** The approvals of stdio MCP sessions: beside the other stores, in `<data>/mcp`. */
function sharedFor(data: string) {
  return createSharedApprovals(join(data, 'mcp'));
}

async function serveStdio(options: { executors?: string; workspace?: string }, io: CliIo): Promise<number> {
  const context = await runtime(options);
  const { place, config, data } = context;
  const parts = await context.execution();
  const shared = sharedFor(data);
  const vaglio = createVaglio({
    threshold: config.vaglio?.threshold,
    log: { dir: join(data, 'vaglio') },
    approvals: shared.approvals,
    protect: placeProtection(place, data).map((entry) => entry.path),
  });
  const session = randomUUID();
  const path = createMcpCallPath({
    catalog: parts.catalog,
    invoker: parts.invoker,
    reviewer: vaglio,
    approvals: shared.approvals,
    held: shared.held,
    workspace: place.workspace,
    home: homedir(),
    executorConfig: config.executors?.config,
  });
  const server = createMcpServer({
    path,
    catalog: parts.catalog,
    session: () => session,
    approveHint: (id) =>
      `Ask the person to run \`metnos mcp approve ${id}\` (\`metnos mcp approvals\` shows the exact call).`,
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
    process.stdin.once('close', () => resolve());
  });
  await server.connect(transport);
  io.err(`metnos mcp: serving the catalog of ${place.executors} on stdio (session ${session})`);
  await closed;
  await server.close().catch(() => undefined);
  return 0;
}

async function listApprovals(data: string, io: CliIo, json: boolean): Promise<number> {
  const shared = sharedFor(data);
  const now = Date.now();
  const rows = [];
  for (const held of await shared.held.list()) {
    const record = await shared.approvals.get(held.approvalId);
    if (record?.state !== 'pending' || Date.parse(record.expiresAt) <= now) continue;
    rows.push({ ...held, record });
  }
  if (json) {
    io.out(
      JSON.stringify(
        rows.map((row) => ({
          id: row.approvalId,
          tool: row.call.executor.name,
          version: row.call.executor.version,
          client: row.client,
          args: row.call.args,
          callHash: row.callHash,
          expiresAt: row.expiresAt,
        })),
        null,
        2,
      ),
    );
    return 0;
  }
  if (rows.length === 0) {
    io.out('no MCP call waits for your approval');
    return 0;
  }
  for (const row of rows)
    io.out(
      `${row.approvalId}  ${row.call.executor.name}@${row.call.executor.version}  from ${row.client}  until ${row.expiresAt}\n  args: ${JSON.stringify(row.call.args).slice(0, 2000)}\n  hash: ${row.callHash}`,
    );
  return 0;
}

async function decide(
  data: string,
  id: string,
  approved: boolean,
  hash: string | undefined,
  io: CliIo,
): Promise<number> {
  const shared = sharedFor(data);
  const held = await shared.held.get(id);
  const record = await shared.approvals.get(id);
  if (!held || !record)
    throw new CliFailure(`no MCP call waits for approval ${id} (metnos mcp approvals lists them)`);
  // the decision is for the call the person saw: the hash given, the store's and the call's own agree
  if ((hash !== undefined && hash !== record.callHash) || callHash(held.call) !== record.callHash)
    throw new CliFailure('the call hash is not the one this approval holds; list the approvals again');
  const result = approved ? await shared.approvals.approve(id, held.call) : await shared.approvals.deny(id);
  if (!result.ok) throw new CliFailure(`not done: ${result.message}`);
  if (!approved) await shared.held.release(id);
  io.out(
    approved
      ? `approved ${held.call.executor.name} for ${held.client}: its next call with the same arguments runs, once`
      : `denied: ${held.call.executor.name} does not run; the client is told so`,
  );
  return 0;
}

async function wrap(
  target: string[],
  values: {
    read?: string[];
    write?: string[];
    network?: string[];
    name?: string;
    key?: string;
    yes?: boolean;
    executors?: string;
    workspace?: string;
  },
  io: CliIo,
): Promise<number> {
  const context = await runtime({ executors: values.executors, workspace: values.workspace });
  const { place, config } = context;
  let plan: ReturnType<typeof planWrap>;
  try {
    plan = planWrap({
      target,
      read: values.read,
      write: values.write,
      network: values.network,
      name: values.name,
      cwd: place.cwd,
    });
  } catch (error) {
    if (error instanceof WrapError) throw new CliFailure(error.message, 2);
    throw error;
  }
  // the person's own key, never the release key: loaded and checked before anything runs
  const keyName = values.key ?? 'default';
  const key = await createKeyStore({ configDir: place.configDir }).load(keyName);
  const release = await Promise.all((place.config?.trustedKeyFiles ?? []).map((file) => readPublicKey(file)));
  if (keyName === 'metnos-release' || release.some((entry) => entry.keyId === key.keyId))
    throw new CliFailure(
      `${keyName} is a release key; wrapped servers are signed with your own key (metnos keys init)`,
      2,
    );
  for (const line of describePlan(plan)) io.out(line);
  if (!values.yes && !(await confirm(io, 'Run this server inside that sandbox to list its tools?'))) {
    io.err('nothing run, nothing written (--yes approves without asking)');
    return 1;
  }
  let tools: ListedTool[];
  try {
    tools = await listToolsInSandbox(plan, {
      runner: createSandboxRunner({ hostOverrides: config.sandbox?.host_overrides }),
      workspace: place.workspace,
    });
  } catch (error) {
    if (error instanceof WrapError) throw new CliFailure(error.message);
    throw error;
  }
  if (tools.length === 0) throw new CliFailure('the server lists no tools: nothing to wrap');
  const createdAt = new Date();
  const executors = tools.map((tool) => wrappedExecutor(plan, tool, createdAt));
  const names = new Set<string>();
  for (const executor of executors) {
    if (names.has(executor.name))
      throw new CliFailure(`two tools would both be named ${executor.name}; use --name`);
    names.add(executor.name);
    if (existsSync(join(place.executors, executor.name)))
      throw new CliFailure(
        `${join(place.executors, executor.name)} exists; nothing written (remove it or use --name)`,
      );
  }
  io.out(
    table([
      ['EXECUTOR', 'MCP TOOL', 'RUNS'],
      ...executors.map((executor) => [
        executor.name,
        executor.tool,
        executor.sideEffects && !executor.idempotent ? 'after your approval, each call' : 'without asking',
      ]),
    ]),
  );
  io.out('(a tool runs without asking only when the server says it only reads, or can be repeated safely)');
  if (
    !values.yes &&
    !(await confirm(
      io,
      `Write and sign these ${executors.length} executors in ${place.executors} with ${key.keyId}?`,
    ))
  ) {
    io.err('nothing written');
    return 1;
  }
  for (const executor of executors) await writeSigned(join(place.executors, executor.name), executor, key);
  io.out(
    `wrapped ${executors.length} tool${executors.length === 1 ? '' : 's'} of ${plan.label} into ${place.executors}, signed with ${key.keyId} (created_by user)\n  next: metnos executor list`,
  );
  return 0;
}

export async function mcpCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      executors: { type: 'string' },
      workspace: { type: 'string' },
      read: { type: 'string', multiple: true },
      write: { type: 'string', multiple: true },
      network: { type: 'string', multiple: true },
      name: { type: 'string' },
      key: { type: 'string' },
      hash: { type: 'string' },
      yes: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [sub, ...rest] = positionals;
  if (values.help) {
    io.out(MCP_HELP);
    return 0;
  }
  const place = { executors: values.executors, workspace: values.workspace };
  switch (sub) {
    case undefined:
    case 'serve':
      return serveStdio(place, io);
    case 'approvals':
      return listApprovals((await runtime(place)).data, io, values.json);
    case 'approve':
    case 'deny': {
      const id = rest[0];
      if (!id || !/^[A-Za-z0-9_.:-]{1,128}$/.test(id))
        throw new CliFailure(`usage: metnos mcp ${sub} <id>`, 2);
      if (values.hash !== undefined && !/^[0-9a-f]{64}$/.test(values.hash))
        throw new CliFailure('--hash is the SHA-256 (hex) of the call, as listed', 2);
      return decide((await runtime(place)).data, id, sub === 'approve', values.hash, io);
    }
    case 'wrap':
      if (rest.length === 0)
        throw new CliFailure('usage: metnos mcp wrap [options] -- <command> [args…] | <url>', 2);
      return wrap(rest, values, io);
    default:
      io.err(`unknown mcp command "${sub}"\n\n${MCP_HELP}`);
      return 2;
  }
}
