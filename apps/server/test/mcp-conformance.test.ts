import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_BUBBLEWRAP, startMcpServer } from './mcp-fixture.ts';
import { TOKEN } from './routes-helpers.ts';

const SUITE = join(
  import.meta.dirname,
  '..',
  'node_modules',
  '@modelcontextprotocol',
  'conformance',
  'dist',
  'index.js',
);
const BASELINE = join(import.meta.dirname, 'mcp-conformance-baseline.yml');

/**
 * The suite connects as an MCP client that sends no bearer token: this
 * loopback forwarder plays the configured client and adds it, passing every
 * other header (Host and Origin included, for the DNS rebinding checks) and
 * the body through unchanged.
 */
function startTokenForwarder(target: URL) {
  const forwarder = createServer((incoming, outgoing) => {
    const upstream = request(
      {
        hostname: target.hostname,
        port: target.port,
        path: incoming.url,
        method: incoming.method,
        headers: { ...incoming.headers, authorization: `Bearer ${TOKEN}` },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on('error', () => outgoing.destroy());
    outgoing.on('close', () => upstream.destroy());
    incoming.pipe(upstream);
  });
  return new Promise<{ port: number; close(): Promise<void> }>((resolve) =>
    forwarder.listen(0, '127.0.0.1', () =>
      resolve({
        port: (forwarder.address() as AddressInfo).port,
        close: () =>
          new Promise((done) => {
            forwarder.closeAllConnections();
            forwarder.close(() => done());
          }),
      }),
    ),
  );
}

/** Runs the official suite's `server` mode; resolves with its exit code and what it printed. */
function runSuite(url: string, output: string) {
  return new Promise<{ code: number | null; printed: string }>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [SUITE, 'server', '--url', url, '--expected-failures', BASELINE, '--output-dir', output],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
    );
    let printed = '';
    child.stdout.on('data', (chunk) => {
      printed += chunk;
    });
    child.stderr.on('data', (chunk) => {
      printed += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, printed }));
  });
}

let fixture: Awaited<ReturnType<typeof startMcpServer>>;
let forwarder: Awaited<ReturnType<typeof startTokenForwarder>>;
let output: string;

describe.skipIf(!HAS_BUBBLEWRAP)('the official MCP conformance suite against /mcp (needs bubblewrap)', () => {
  beforeAll(async () => {
    fixture = await startMcpServer('mcp-conformance', ['time_now', 'fs_read', 'json_query']);
    forwarder = await startTokenForwarder(new URL(fixture.server.url));
    output = await mkdtemp(join(tmpdir(), 'metnos-mcp-conformance-'));
  });

  afterAll(async () => {
    await forwarder?.close();
    await fixture?.close();
    await rm(output, { recursive: true, force: true });
  });

  it('passes every scenario but those the baseline names (features Metnos does not offer)', async () => {
    const { code, printed } = await runSuite(`http://localhost:${forwarder.port}/mcp`, output);
    const plain = stripVTControlCharacters(printed);
    const scenarios = [...plain.matchAll(/^([✓✗]) (\S+): \d+ passed, \d+ failed$/gm)];
    const passing = scenarios.filter((match) => match[1] === '✓').length;
    const verdict = /^Baseline check passed.*$/m.exec(plain)?.[0] ?? 'no baseline verdict';
    // one line, worded so no runner mistakes the suite's per-scenario counts for this package's tests
    console.log(
      `MCP conformance (@modelcontextprotocol/conformance): ${passing} of ${scenarios.length} scenarios pass, the other ${scenarios.length - passing} are the baseline's; "${verdict}"`,
    );
    expect(code, printed.slice(-4000)).toBe(0);
    // the scenarios that concern what Metnos serves ran and passed, check by check
    const results = await readdir(output);
    for (const scenario of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']) {
      const folder = results.find((name) => name.startsWith(`server-${scenario}-`) || name === scenario);
      expect(folder, `${scenario} ran`).toBeDefined();
      const checks = JSON.parse(await readFile(join(output, folder!, 'checks.json'), 'utf8')) as Array<{
        status: string;
      }>;
      expect(checks.some((check) => check.status === 'SUCCESS')).toBe(true);
      expect(checks.filter((check) => check.status === 'FAILURE')).toEqual([]);
    }
  });
});
