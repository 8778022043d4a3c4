import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { HostService, HostServiceCall } from '@metnos/executor-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxRunner, type SandboxRunner } from '../src/index.ts';
import { createLab, type Lab, observingCode, type ProfileSpec } from './fixtures.ts';

// Host services (http://metnos.host/<service>) for real: signed executors under the
// full tier ask through their egress proxy, and the host's handlers answer.

type Observed = Record<string, { ok: boolean; code?: string; value?: unknown }>;

/** Executor code: `post(path, body, init)` answers `{ status, body }` of a request to metnos.host. */
const POST = `const post = async (path, body, init = {}) => {
  const response = await fetch('http://metnos.host' + path, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json' }, ...init });
  return { status: response.status, body: await response.json().catch(() => null) };
};`;

describe.concurrent('host services through the egress proxy', () => {
  let lab: Lab;
  let runner: SandboxRunner;
  let workspace: string;
  const lookups: string[] = [];
  const calls: HostServiceCall[] = [];

  const echo: HostService = (call) => {
    calls.push(call);
    return { ok: true, value: { echoed: call.body, by: call.executor.name } };
  };

  async function run(
    name: string,
    body: string,
    options: { capabilities?: string[]; profile?: ProfileSpec; services?: Record<string, HostService> } = {},
  ) {
    const harness = await lab.executor(
      name,
      {
        code: observingCode(`${POST}\n${body}`),
        profile: options.profile,
        capabilities: options.capabilities,
      },
      runner,
    );
    const result = await harness.invoke({}, { workspace, hostServices: options.services });
    return { result, observed: (result.ok ? result.content : {}) as Observed };
  }

  beforeAll(async () => {
    lab = await createLab('metnos-host-services-');
    workspace = join(lab.root, 'workspace');
    mkdirSync(workspace, { recursive: true });
    runner = createSandboxRunner({
      home: join(lab.root, 'home'),
      audit: false,
      lookup: async (host) => {
        lookups.push(host);
        return ['203.0.113.7'];
      },
    });
    expect(runner.tier).toBe('full');
  });

  afterAll(async () => {
    // the reserved name never reached DNS, whatever the profiles said
    expect(lookups.filter((host) => host.includes('metnos.host'))).toEqual([]);
    await rm(lab.root, { recursive: true, force: true });
  });

  it('answers a declared and offered service, with no network in the profile, and nothing else is reachable', async () => {
    const { result, observed } = await run(
      'host_echo',
      `out.echo = await attempt(() => post('/echo', { hello: 'host' }));
       out.other = await attempt(async () => (await fetch('http://example.org/')).status);
       out.context = { ok: true, value: Object.keys(ctx).sort() };`,
      { capabilities: ['host:echo'], services: { echo } },
    );
    expect(result.ok).toBe(true);
    expect(observed.echo).toEqual({
      ok: true,
      value: { status: 200, body: { echoed: { hello: 'host' }, by: 'host_echo' } },
    });
    expect(observed.other?.ok).toBe(false);
    expect(result.isolation?.notes?.join('\n')).toMatch(
      /egress refused example\.org:80: not on the allow-list/,
    );
    // the handlers stay on the host: the process sees no trace of them
    expect(JSON.stringify(observed.context)).not.toMatch(/hostServices|echo/);
    expect(result.isolation?.layers).toContain('egress-proxy');
    expect(result.isolation?.notes?.join('\n')).toMatch(/host services: echo at http:\/\/metnos\.host/);
    const call = calls.find((entry) => entry.executor.name === 'host_echo');
    expect(call).toMatchObject({ service: 'echo', body: { hello: 'host' }, executor: { version: '1.0.0' } });
    expect(call?.signal.aborted).toBe(true);
  });

  it('refuses a service the manifest does not declare, even when the host offers it', async () => {
    const { result, observed } = await run(
      'host_undeclared',
      `out.echo = await attempt(() => post('/echo', {}));`,
      {
        capabilities: ['host:model'],
        services: { echo, model: echo },
        profile: { domains: ['api.example.test'] },
      },
    );
    expect(result.ok).toBe(true);
    expect(observed.echo?.value).toEqual({
      status: 403,
      body: {
        error: {
          class: 'NotOffered',
          message: 'host service echo is not declared by this executor (capability host:echo)',
        },
      },
    });
    expect(calls.filter((call) => call.executor.name === 'host_undeclared')).toEqual([]);
  });

  it('refuses a declared service the host does not offer to this call', async () => {
    const { observed } = await run(
      'host_not_offered',
      `out.model = await attempt(() => post('/model', { prompt: 'hi' }));
       out.echo = await attempt(() => post('/echo', { fine: true }));`,
      { capabilities: ['host:model', 'host:echo'], services: { echo } },
    );
    expect(observed.model?.value).toEqual({
      status: 403,
      body: { error: { class: 'NotOffered', message: 'host service model is not offered to this call' } },
    });
    expect(observed.echo?.value).toMatchObject({ status: 200 });
  });

  it('starts no proxy for a call offered nothing and without network: metnos.host is unreachable', async () => {
    const { observed, result } = await run(
      'host_none',
      `out.echo = await attempt(() => post('/echo', {}));`,
      {
        capabilities: ['host:echo'],
      },
    );
    expect(observed.echo?.ok).toBe(false);
    expect(result.isolation?.layers).not.toContain('egress-proxy');
  });

  it('refuses what is not a well-formed request: method, path, size, JSON, depth, CONNECT', async () => {
    const deep = `${'['.repeat(40)}${']'.repeat(40)}`;
    const { observed } = await run(
      'host_malformed',
      `out.get = await attempt(async () => (await fetch('http://metnos.host/echo')).status);
       out.path = await attempt(async () => (await post('/echo/more', {})).status);
       out.query = await attempt(async () => (await post('/echo?x=1', {})).status);
       out.large = await attempt(async () => (await post('/echo', 'x'.repeat(70 * 1024))).status);
       out.json = await attempt(async () => (await post('/echo', '{not json')).body);
       out.deep = await attempt(async () => (await post('/echo', ${JSON.stringify(deep)})).body);
       out.connect = await attempt(() => new Promise((resolve, reject) => {
         const socket = net.connect(3128, '127.0.0.1', () => socket.write('CONNECT metnos.host:443 HTTP/1.1\\r\\nhost: metnos.host:443\\r\\n\\r\\n'));
         let text = '';
         socket.on('data', (chunk) => (text += chunk));
         socket.on('end', () => resolve(text.split('\\r\\n')[0]));
         socket.on('error', reject);
       }));`,
      {
        capabilities: ['host:echo'],
        services: { echo },
        profile: { domains: ['metnos.host', '*.metnos.host'] },
      },
    );
    expect(observed.get?.value).toBe(405);
    expect(observed.path?.value).toBe(404);
    expect(observed.query?.value).toBe(404);
    expect(observed.large?.value).toBe(413);
    expect(observed.json?.value).toEqual({
      error: { class: 'InvalidInput', message: 'the request body is not JSON' },
    });
    expect(observed.deep?.value).toEqual({
      error: { class: 'InvalidInput', message: 'the request body nests deeper than 16 levels' },
    });
    expect(observed.connect?.value).toBe('HTTP/1.1 403 Forbidden');
  });

  it('passes a typed refusal on as data and hides what a failing handler threw', async () => {
    const { observed } = await run(
      'host_refusals',
      `out.spent = await attempt(() => post('/spent', {}));
       out.broken = await attempt(() => post('/broken', {}));`,
      {
        capabilities: ['host:spent', 'host:broken'],
        services: {
          spent: () => ({ ok: false, error: { class: 'BudgetExhausted', message: 'no more model calls' } }),
          broken: () => {
            throw new Error('SECRET-DETAIL of the host');
          },
        },
      },
    );
    expect(observed.spent?.value).toEqual({
      status: 429,
      body: { error: { class: 'BudgetExhausted', message: 'no more model calls' } },
    });
    expect(observed.broken?.value).toEqual({
      status: 500,
      body: { error: { class: 'ServiceFailed', message: 'host service broken failed' } },
    });
  });
});
