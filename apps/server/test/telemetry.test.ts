import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import { createCatalog, createInvoker, createProcessRunner, generateSigningKey } from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { createEngine, createGapLog } from '@metnos/planner';
import { createScriptedModel } from '@metnos/planner/test';
import { trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { startTelemetry, TelemetryError } from '../src/telemetry.ts';

const TOKEN = 'y'.repeat(43);
/** The request and the file's content: neither may leave the process in a span. */
const REQUEST = 'read the secret-diary-7731.md of Ada Lovelace';
const CONTENT = 'dear diary, the combination is 4471\n';

let root: string;
let collector: Server;
let collectorUrl: string;
const received: Array<{ path: string; type: string; body: string }> = [];
let closeStores: () => void;
let api: ReturnType<typeof createApp>;

/** A loopback stand-in for an OTLP collector: it records every POST and answers 200. */
function startCollector(): Promise<void> {
  collector = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        path: request.url ?? '',
        type: request.headers['content-type'] ?? '',
        body: Buffer.concat(chunks).toString('utf8'),
      });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) =>
    collector.listen(0, '127.0.0.1', () => {
      collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
      resolve();
    }),
  );
}

beforeAll(async () => {
  await startCollector();
  root = await mkdtemp(join(tmpdir(), 'metnos-telemetry-'));
  const workspace = join(root, 'workspace');
  await mkdir(workspace, { recursive: true });
  await writeFile(join(workspace, 'secret-diary-7731.md'), CONTENT);
  const key = await generateSigningKey();
  await writeSignedExecutor({
    root: join(root, 'executors'),
    name: 'fs_read',
    key,
    code: `import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineExecutor, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run(args, ctx) { return ok(readFileSync(join(ctx.workspace, args.path), 'utf8')); } });
`,
    schema: {
      definitions: {
        Input: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        Output: { type: 'string' },
      },
    },
  });
  const catalog = createCatalog({ root: join(root, 'executors'), trustedKeys: [key] });
  await catalog.load();
  const fastpath = createFastpathStore({ path: join(root, 'fastpath.sqlite') });
  const autopath = createAutopathStore({ path: join(root, 'autopath.sqlite') });
  const gaps = createGapLog({ path: join(root, 'gaps.sqlite') });
  closeStores = () => {
    fastpath.close();
    autopath.close();
    gaps.close();
  };
  const { createDefaultEmbedder } = (await import('@metnos/autopath')) as unknown as {
    createDefaultEmbedder: () => { id: string; embed(texts: string[]): Promise<Float32Array[]> };
  };
  const plan = JSON.stringify({
    steps: [{ tool: 'fs_read', args: { path: 'secret-diary-7731.md' } }],
    final_message: '${step1.content}',
  });
  const engine = createEngine({
    catalog,
    invoker: createInvoker({ catalog, runner: createProcessRunner() }),
    reviewer: { evaluate: () => ({ approved: true, reason: 'ok', score: 1, blocked_by: null }) },
    models: {
      fast: createScriptedModel([]),
      wise: createScriptedModel([{ text: plan }, { text: plan }]),
    },
    embedder: createDefaultEmbedder(),
    fastpath,
    autopath,
    gaps,
    workspace,
  });
  api = createApp({ token: TOKEN, engine });
});

afterAll(async () => {
  closeStores?.();
  await new Promise((resolve) => collector?.close(resolve));
});

/** A turn through the API, as a client sends it. */
async function turn(request: string) {
  const response = await api.fetch(
    new Request('http://127.0.0.1/api/turns', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ request }),
    }),
  );
  expect(response.status).toBe(200);
  return (await response.json()) as { layer: string; finalMessage: string };
}

interface OtlpSpan {
  name: string;
  traceId: string;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
}

/** The spans of every OTLP/HTTP JSON export the collector received, with each batch's service.name. */
function exported(): Array<OtlpSpan & { service: unknown }> {
  return received.flatMap((post) =>
    (
      JSON.parse(post.body) as {
        resourceSpans: Array<{
          resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
          scopeSpans: Array<{ spans: OtlpSpan[] }>;
        }>;
      }
    ).resourceSpans.flatMap((resource) => {
      const service = resource.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue;
      return resource.scopeSpans.flatMap((scope) => scope.spans.map((span) => ({ ...span, service })));
    }),
  );
}

const noProvider = () => {
  const span = trace.getTracer('probe').startSpan('probe');
  const recording = span.isRecording();
  span.end();
  return !recording;
};

describe('OTLP export', () => {
  it('records nothing while no telemetry is started: no provider is registered', async () => {
    expect(noProvider()).toBe(true);
    expect((await turn(REQUEST)).finalMessage).toBe(CONTENT);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(received).toEqual([]);
  });

  it("sends a real turn's spans to the collector as OTLP JSON, flushed at shutdown, without the request or its content", async () => {
    const telemetry = startTelemetry({ endpoint: `${collectorUrl}/v1/traces`, serviceName: 'metnos-test' });
    expect(noProvider()).toBe(false);
    // a new request: the Proposer plans it, so the turn runs a step
    const answer = await turn(`${REQUEST} again`);
    expect(answer).toMatchObject({ layer: 'engine', finalMessage: CONTENT });
    // the batch waits (5 s by default): shutdown is what sends it
    expect(received).toEqual([]);
    await telemetry.shutdown();
    await telemetry.shutdown(); // idempotent
    expect(noProvider()).toBe(true);

    expect(received.length).toBeGreaterThan(0);
    for (const post of received) {
      expect(post.path).toBe('/v1/traces');
      expect(post.type).toMatch(/^application\/json/);
    }
    const spans = exported();
    const names = spans.map((span) => span.name);
    expect(names).toContain('metnos.turn');
    expect(names).toContain('metnos.step 1');
    expect(names).toContain('metnos.executor.invoke');
    expect(new Set(spans.map((span) => span.service))).toEqual(new Set(['metnos-test']));
    // one trace: the step under the turn
    const turnSpan = spans.find((span) => span.name === 'metnos.turn')!;
    expect(spans.find((span) => span.name === 'metnos.step 1')!.traceId).toBe(turnSpan.traceId);
    const tool = spans
      .find((span) => span.name === 'metnos.step 1')!
      .attributes?.find((a) => a.key === 'metnos.step.tool');
    expect(tool?.value).toEqual({ stringValue: 'fs_read' });

    const payload = received.map((post) => post.body).join('\n');
    for (const secret of ['secret-diary', 'Lovelace', 'combination', '4471', 'dear diary'])
      expect(payload).not.toContain(secret);
  });

  it('refuses an endpoint that is not an http(s) URL, and a second provider', async () => {
    expect(() => startTelemetry({ endpoint: 'ftp://127.0.0.1/v1/traces' })).toThrow(TelemetryError);
    expect(() => startTelemetry({ endpoint: 'not a url' })).toThrow(TelemetryError);
    expect(() => startTelemetry({ endpoint: 'http://user:pw@127.0.0.1:4318/v1/traces' })).toThrow(
      /user or password/,
    );
    const first = startTelemetry({ endpoint: `${collectorUrl}/v1/traces` });
    const second = (() => {
      try {
        return startTelemetry({ endpoint: `${collectorUrl}/v1/traces` });
      } catch (error) {
        return error;
      }
    })();
    await first.shutdown();
    expect(second).toBeInstanceOf(TelemetryError);
    expect(noProvider()).toBe(true);
  });
});
