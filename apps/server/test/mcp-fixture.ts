import { existsSync } from 'node:fs';
import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  createAuditLog,
  createCatalog,
  createInvoker,
  createReceiptChain,
  generateSigningKey,
  readPublicKey,
  receiptsDirOf,
} from '@metnos/executor-sdk';
import { createSandboxRunner } from '@metnos/sandbox';
import { createApprovalStore, createVaglio } from '@metnos/vaglio';
import { createMcpCallPath, isMcpCall } from '../src/mcp/call-path.ts';
import { createPendingCalls } from '../src/routes/approvals.ts';
import { startServer } from '../src/serve.ts';
import { scratch, TOKEN } from './routes-helpers.ts';

const REPO = join(import.meta.dirname, '..', '..', '..');

/** The real sandbox needs bubblewrap (Debian's `bubblewrap`); the MCP tests skip, saying so, without it. */
export const HAS_BUBBLEWRAP = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'].some((path) =>
  existsSync(path),
);

const noEngine = {
  runTurn: () => Promise.reject(new Error('no turns here')),
  feedback: () => Promise.reject(new Error('no turns here')),
};

/**
 * A server on a loopback port with `/mcp` over copies of real seeds (signed
 * with the release key) in a temp folder, the real sandbox, the vaglio and
 * the approval routes, as `metnos serve` composes them.
 */
export async function startMcpServer(prefix: string, seeds: readonly string[]) {
  const base = await scratch(prefix);
  const root = join(base, 'executors');
  const workspace = join(base, 'workspace');
  await mkdir(join(workspace, 'notes'), { recursive: true });
  await writeFile(join(workspace, 'notes', 'todo.md'), 'buy milk\ncall Ada\n');
  for (const name of seeds)
    await cp(join(REPO, 'executors', name), join(root, name), {
      recursive: true,
      filter: (source) => !source.includes('node_modules'),
    });
  const key = await readPublicKey(join(REPO, 'keys', 'metnos-release.pub'));
  const catalog = createCatalog({ root, trustedKeys: [key], stateDir: join(base, 'state') });
  await catalog.load();
  // the installation's receipt chain: the invoker appends a signed receipt for every MCP call too
  const receiptKey = await generateSigningKey();
  const invoker = createInvoker({
    catalog,
    runner: createSandboxRunner(),
    audit: createAuditLog({ workspace }),
    receipts: createReceiptChain({ dir: receiptsDirOf(workspace), key: receiptKey }),
  });
  const approvals = createApprovalStore();
  const vaglio = createVaglio({ approvals });
  const pending = createPendingCalls();
  const path = createMcpCallPath({
    catalog,
    invoker,
    reviewer: vaglio,
    approvals,
    held: {
      hold: ({ approvalId, call }) => pending.add({ approvalId, call }),
      release: (approvalId) => pending.remove(approvalId),
    },
    workspace,
    home: homedir(),
  });
  const server = await startServer({
    token: TOKEN,
    engine: noEngine,
    port: 0,
    api: {
      approvals: {
        approvals,
        pending,
        onDecision: (decision) => (isMcpCall(decision.call) ? { mcp: 'approved' } : undefined),
      },
    },
    mcp: { path, catalog },
  });
  return {
    base,
    root,
    workspace,
    catalog,
    server,
    receiptKey,
    async close() {
      await server.close();
      await rm(base, { recursive: true, force: true });
    },
  };
}
