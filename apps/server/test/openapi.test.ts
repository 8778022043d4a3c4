import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SyntError } from '@metnos/synt';
import Ajv2020Module from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type ServerEngine } from '../src/app.ts';
import { createMcpCallPath } from '../src/mcp/call-path.ts';
import { openApiPath } from '../src/openapi.ts';
import type { ApiRouteDeps } from '../src/routes/api.ts';
import { createPendingCalls } from '../src/routes/approvals.ts';
import { Scheduler } from '../src/scheduler/index.ts';

const TOKEN = 'o'.repeat(43);

// biome-ignore lint/suspicious/noExplicitAny: the document and answers are read field by field
type Json = any;

/** Turns answer at once and feedback finds no turn: enough to reach past a body's checks. */
const engine: ServerEngine = {
  runTurn: async () =>
    ({
      turnId: 't1',
      layer: 'engine',
      finalKind: 'answer',
      finalMessage: 'ok',
      modelCalls: 0,
      latencyMs: 1,
      asOf: '2026-01-01T00:00:00.000Z',
      steps: [],
    }) as unknown as Awaited<ReturnType<ServerEngine['runTurn']>>,
  feedback: async () => ({ recorded: false }) as unknown as Awaited<ReturnType<ServerEngine['feedback']>>,
};

/** Every route group, over stores that hold nothing: these tests look at input, not data. */
function everyGroup(auditDir: string): ApiRouteDeps {
  return {
    memory: {
      fastpath: { list: () => [], remove: () => false },
      autopath: {
        list: () => [],
        clusters: () => [],
        antiAutopaths: () => [],
        recentObservations: () => [],
        remove: () => false,
      },
      gaps: { list: () => [] },
    },
    executors: {
      catalog: {
        list: () => [],
        get: () => undefined,
        quarantined: () => [],
      } as unknown as NonNullable<ApiRouteDeps['executors']>['catalog'],
    },
    approvals: {
      approvals: {
        get: async () => undefined,
        approve: async () => ({ ok: false, reason: 'unknown', message: 'none' }),
        deny: async () => ({ ok: false, reason: 'unknown', message: 'none' }),
      } as unknown as NonNullable<ApiRouteDeps['approvals']>['approvals'],
      pending: createPendingCalls(),
    },
    audit: { auditDir },
    doctor: { sandbox: () => ({ ok: true }), integrity: () => [], stores: () => [] },
    proposals: {
      synt: {
        list: () => [],
        show: (id: string) => {
          throw new SyntError('not_found', `no proposal or run ${id}`);
        },
        approve: async (id: string) => {
          throw new SyntError('not_found', `no proposal or run ${id}`);
        },
        reject: (id: string) => {
          throw new SyntError('not_found', `no proposal or run ${id}`);
        },
      },
    },
  };
}

const Ajv2020 = ((Ajv2020Module as unknown as { default?: typeof Ajv2020Module }).default ??
  Ajv2020Module) as unknown as new (
  options: object,
) => {
  compile(schema: object): ((value: unknown) => boolean) & { errors?: unknown };
  addSchema(schema: object, key: string): void;
};

/** `/mcp` over an empty catalog: the routes are mounted, nothing is offered. */
function noMcp() {
  const catalog = { get: () => undefined, executors: () => [], list: () => [] };
  const path = createMcpCallPath({
    catalog,
    invoker: { invoke: () => Promise.reject(new Error('no calls here')) },
    reviewer: {
      evaluate: () => ({ approved: false, reason: 'no calls here', score: 0, blocked_by: 'guard' }),
    },
    approvals: {
      check: async () => ({ ok: false, reason: 'unknown', message: 'none' }),
      get: async () => undefined,
    },
    held: { hold: () => undefined, release: () => undefined },
    workspace: tmpdir(),
    home: tmpdir(),
  });
  return { path, catalog };
}

let root: string;
let scheduler: Scheduler;
let api: ReturnType<typeof createApp>;
let doc: Json;
let ajv: InstanceType<typeof Ajv2020>;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'metnos-openapi-'));
  scheduler = new Scheduler({
    store: join(root, 'scheduler.sqlite'),
    fire: async () => ({ ok: true, summary: 'fired' }),
  });
  api = createApp({ token: TOKEN, engine, scheduler, api: everyGroup(join(root, '.audit')), mcp: noMcp() });
  const response = await call('GET', '/api/openapi.json');
  expect(response.status).toBe(200);
  doc = response.body;
  ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema(doc, 'openapi');
});

afterAll(async () => {
  await scheduler?.stop();
});

async function call(method: string, path: string, body?: unknown, token = TOKEN) {
  const response = await api.fetch(
    new Request(`http://127.0.0.1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  );
  const text = await response.text();
  let parsed: Json = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: response.status, body: parsed };
}

/** The routes an app registers, as `get /api/x/{id}` (middleware, method ALL, left out). */
function registered(app: ReturnType<typeof createApp>['app']): string[] {
  return [
    ...new Set(
      app.routes
        .filter((route) => route.method !== 'ALL')
        .map((route) => `${route.method.toLowerCase()} ${openApiPath(route.path)}`),
    ),
  ].sort();
}

function documented(document: Json): string[] {
  return Object.entries(document.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method} ${path}`))
    .sort();
}

/** A path with its parameters filled: `{id}` → `x1`, `{name}` → `fs_read`. */
function filled(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'name' ? 'fs_read' : 'x1'));
}

function accepts(schema: object, value: unknown): boolean {
  return ajv.compile(schema)(value) as boolean;
}

/** The refusal shape the document names, checked on an answer. */
function expectRefusalShape(body: unknown) {
  expect(accepts({ $ref: 'openapi#/components/schemas/Refusal' }, body), JSON.stringify(body)).toBe(true);
}

/**
 * Bodies for every route that takes one: some the document's schema accepts,
 * some it refuses. Each is first put to the document, then to the route.
 */
const bodies: Record<string, { valid: unknown[]; invalid: unknown[] }> = {
  'post /api/turns': {
    valid: [{ request: 'what time is it' }],
    invalid: [{}, { request: '' }, { request: 5 }, { request: 'x'.repeat(8001) }, ['read']],
  },
  'post /api/turns/{id}/feedback': {
    valid: [{ kind: 'up' }, { kind: 'retry' }],
    invalid: [{}, { kind: 'sideways' }],
  },
  'post /api/executors/{name}/archive': {
    valid: [{}, { version: '1.0.0' }],
    invalid: [{ version: 'one' }, { version: 1 }],
  },
  'post /api/executors/{name}/rehabilitate': {
    valid: [{ version: '1.0.0' }],
    invalid: [{}, { version: '1.0' }],
  },
  'post /api/executors/{name}/promote': {
    valid: [{ version: '2.1.0-beta.1' }],
    invalid: [{}, { version: 'latest' }],
  },
  'post /api/approvals/{id}': {
    valid: [{ decision: 'approve', callHash: 'a'.repeat(64) }],
    invalid: [
      { decision: 'maybe', callHash: 'a'.repeat(64) },
      { decision: 'deny' },
      { decision: 'deny', callHash: 'A'.repeat(64) },
    ],
  },
  'post /api/proposals/{id}': {
    valid: [{ decision: 'reject' }, { decision: 'approve', digest: `sha256:${'a'.repeat(64)}` }],
    invalid: [
      {},
      { decision: 'maybe' },
      { decision: 'approve', digest: 'md5:abc' },
      { decision: 'approve', spec: {} },
    ],
  },
  'post /api/schedules': {
    valid: [
      { target: { kind: 'request', text: 'summarise my mail' }, cadence: 'every 15 minutes' },
      { target: { kind: 'executor', executor: 'time_now' }, text: 'every day at 8', count: 3 },
    ],
    invalid: [
      { cadence: 'manual' },
      { target: { kind: 'nothing' }, cadence: 'manual' },
      { target: { kind: 'request', text: 'x' }, cadence: 'manual', on_failure: 'explode' },
      { target: { kind: 'request', text: 'x' }, cadence: 'manual', count: 0 },
      { target: { kind: 'executor', executor: 'Bad-Name' }, cadence: 'manual' },
    ],
  },
  'patch /api/schedules/{id}': {
    valid: [{ count: 5 }, { on_failure: 'skip', approved: true }],
    invalid: [{ count: 0 }, { on_failure: 'explode' }, { paused: true }],
  },
};

describe('the OpenAPI document', () => {
  it('is served behind the bearer token, as OpenAPI 3.1 with the bearer scheme and the refusal shape', async () => {
    const refused = await call('GET', '/api/openapi.json', undefined, 'x'.repeat(43));
    expect(refused.status).toBe(401);
    expectRefusalShape(refused.body);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.security).toEqual([{ bearer: [] }]);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.schemas.Refusal).toMatchObject({
      type: 'object',
      properties: { error: { type: 'string' }, message: { type: 'string' } },
      required: ['error', 'message'],
    });
    // the console's files are the only answers without the token
    const open = documented(doc).filter((key) => {
      const [method, path] = key.split(' ') as [string, string];
      return doc.paths[path][method].security !== undefined;
    });
    expect(open).toEqual([
      'get /',
      'get /console/console.css',
      'get /console/console.js',
      'get /console/devices.js',
      'get /console/proposals.js',
      'get /favicon.ico',
    ]);
    for (const path of open.map((key) => key.split(' ')[1]!))
      expect((await call('GET', path, undefined, 'x'.repeat(43))).status).toBeLessThan(300);
  });

  it('lists every route the app registers, and none it does not', async () => {
    expect(documented(doc)).toEqual(registered(api.app));
    expect(documented(doc).length).toBeGreaterThan(25);
    // every :param of a path is a documented path parameter, and every 401 the refusal shape
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, Json>>))
      for (const operation of Object.values(operations)) {
        const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).sort();
        const params = (operation.parameters ?? [])
          .filter((param: Json) => param.in === 'path')
          .map((param: Json) => param.name)
          .sort();
        expect(params, path).toEqual(inPath);
        if (operation.security === undefined)
          expect(operation.responses['401'].content['application/json'].schema).toEqual({
            $ref: '#/components/schemas/Refusal',
          });
      }

    // an app with fewer groups documents fewer routes, still exactly its own
    const bare = createApp({ token: TOKEN, engine });
    const bareDoc = (await (
      await bare.fetch(
        new Request('http://127.0.0.1/api/openapi.json', { headers: { authorization: `Bearer ${TOKEN}` } }),
      )
    ).json()) as Json;
    expect(documented(bareDoc)).toEqual(registered(bare.app));
    expect(documented(bareDoc)).not.toContain('get /api/schedules');
  });

  it('documents the body schemas the routes validate with: what the document refuses, the route refuses', async () => {
    const withBody = documented(doc).filter((key) => {
      const [method, path] = key.split(' ') as [string, string];
      return doc.paths[path][method].requestBody !== undefined;
    });
    expect(withBody).toEqual(Object.keys(bodies).sort());
    for (const key of withBody) {
      const [method, path] = key.split(' ') as [string, string];
      const schema = doc.paths[path][method].requestBody.content['application/json'].schema;
      const { valid, invalid } = bodies[key]!;
      // every schema is strict: a field it does not name is refused by both
      const foreign = { ...(valid[0] as object), not_a_field: 1 };
      for (const body of valid) {
        expect(accepts(schema, body), `${key} should accept ${JSON.stringify(body)}`).toBe(true);
        const answer = await call(method.toUpperCase(), filled(path), body);
        expect(answer.status, `${key} ${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`).not.toBe(400);
        expect(answer.status).toBeLessThan(500);
      }
      for (const body of [...invalid, foreign]) {
        expect(accepts(schema, body), `${key} should refuse ${JSON.stringify(body)}`).toBe(false);
        const answer = await call(method.toUpperCase(), filled(path), body);
        expect(answer.status, `${key} ${JSON.stringify(body)}`).toBe(400);
        expectRefusalShape(answer.body);
      }
    }
  });

  it('documents the path and query parameters the routes check', async () => {
    let checked = 0;
    for (const key of documented(doc)) {
      const [method, path] = key.split(' ') as [string, string];
      const operation = doc.paths[path][method];
      const body = operation.requestBody
        ? bodies[key]!.valid[0]
        : method === 'get' || method === 'delete'
          ? undefined
          : {};
      for (const param of operation.parameters ?? []) {
        // '!!' is no id, name, number, day or enum value: the document says so, and so does the route
        expect(accepts(param.schema, '!!'), `${key} ${param.name}`).toBe(false);
        const target =
          param.in === 'path'
            ? path.replace(/\{(\w+)\}/g, (_, name: string) =>
                name === param.name ? '!!' : name === 'name' ? 'fs_read' : 'x1',
              )
            : `${filled(path)}?${param.name}=!!`;
        const answer = await call(method.toUpperCase(), target, body);
        expect(answer.status, `${key} ${target}`).toBe(400);
        expectRefusalShape(answer.body);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(15);
    // values the document accepts pass the route
    for (const [path, ok] of [
      ['/api/memory/fastpaths?limit=5', true],
      ['/api/memory/observations?limit=500', true],
      ['/api/memory/observations?limit=501', false],
      ['/api/schedules?all=true', true],
      ['/api/audit?day=2026-01-02&folder=sandbox&limit=3', true],
      ['/api/proposals?all=true', true],
    ] as const) {
      const answer = await call('GET', path);
      expect(answer.status, path).toBe(ok ? 200 : 400);
    }
  });
});
