import type { EngineResult, FeedbackKind, FeedbackOutcome, TurnEvent } from '@metnos/planner';
import type { AgentEvent, AgentRunResult } from '@metnos/planner/agents';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import manifest from '../package.json' with { type: 'json' };
import { consoleRouteDocs, registerConsole } from './console.ts';
import { type McpRouteDeps, mcpRouteDocs, registerMcpRoute } from './mcp/http.ts';
import { openApiDocument, type RouteDoc } from './openapi.ts';
import { type ApiRouteDeps, apiRouteDocs, registerApiRoutes } from './routes/api.ts';
import { idParam } from './routes/common.ts';
import { registerScheduleRoutes, scheduleRouteDocs } from './routes/schedules.ts';
import type { Scheduler } from './scheduler/scheduler.ts';
import { bearerMatches } from './token.ts';

/** The part of the engine the server drives. */
export interface ServerEngine {
  runTurn(
    request: string,
    options?: { signal?: AbortSignal; onEvent?: (event: TurnEvent) => void },
  ): Promise<EngineResult>;
  feedback(turnId: string, kind: FeedbackKind): Promise<FeedbackOutcome>;
}

/**
 * The agent graphs the server runs for `POST /api/turns` with `agents`: the
 * `[agents.<name>]` graphs of `metnos.toml` (`metnos serve` builds them).
 */
export interface ServerAgents {
  names(): string[];
  run(
    name: string,
    goal: string,
    options?: { signal?: AbortSignal; onEvent?: (event: AgentEvent) => void },
  ): Promise<AgentRunResult>;
}

/** Settings of {@link createApp}. */
export interface AppSettings {
  /** The bearer token every route asks for. */
  token: string;
  engine: ServerEngine;
  /** Turns at once; more wait in line (default 4). */
  maxConcurrentTurns?: number;
  /** When set, the scheduler's routes are mounted (`/api/schedules`, see `registerScheduleRoutes`). */
  scheduler?: Scheduler;
  /** Route groups to mount (memory, executors, approvals, audit, doctor, proposals), each when its dependencies are given. */
  api?: ApiRouteDeps;
  /** When set, `/mcp` serves the catalog's active executors to MCP clients (see `registerMcpRoute`). */
  mcp?: McpRouteDeps;
  /** When set, `POST /api/turns` with `agents: "<name>"` runs that agent graph instead of the engine. */
  agents?: ServerAgents;
}

/** A request body the API refuses: the field and why. */
const turnBody = z
  .object({
    request: z.string().trim().min(1).max(8000),
    /** The name of an agent graph (`[agents.<name>]`) to run on the request instead of the engine. */
    agents: z
      .string()
      .regex(/^[a-zA-Z_][a-zA-Z0-9_-]*$/)
      .max(64)
      .optional(),
  })
  .strict();
const feedbackBody = z.object({ kind: z.enum(['up', 'down', 'retry']) }).strict();

/** The routes {@link createApp} itself registers, for the OpenAPI document. */
const coreRouteDocs: RouteDoc[] = [
  { method: 'get', path: '/api/health', summary: 'the server is up: `{ ok, turnsInFlight }`' },
  {
    method: 'get',
    path: '/api/openapi.json',
    summary:
      'this document: every route this server mounts, generated from the schemas its routes validate with',
  },
  {
    method: 'post',
    path: '/api/turns',
    summary: 'runs a turn: the answer as JSON, or with `Accept: text/event-stream` events as the turn runs',
    description:
      'Events: `started`, `layer` and `pass` for each layer tried, `step` (started, finished), `approval` when a call waits for one, `answer`. The request is trimmed; an empty one is refused. With `agents: "<name>"` the agent graph `[agents.<name>]` runs on the request instead (an unknown name is refused with 400): the answer is the run (`runId`, `status`, `ending`, `finalAnswer`, `visits`, `events`), and the stream sends each trace event (`agent.llm.turn`, `agent.handoff.transition`, …) as it happens, then `answer`.',
    body: turnBody,
    refusals: [400],
    produces: ['application/json', 'text/event-stream'],
  },
  {
    method: 'post',
    path: '/api/turns/:id/feedback',
    summary: "feedback on a turn, through the engine's one feedback path (`retry` answers again)",
    params: { id: idParam },
    body: feedbackBody,
    refusals: [400, 404],
  },
];

/** What a turn reports to a client: the engine's result without machine records. */
export function publicTurn(result: EngineResult) {
  return {
    turnId: result.turnId,
    layer: result.layer,
    finalKind: result.finalKind,
    finalMessage: result.finalMessage,
    modelCalls: result.modelCalls,
    latencyMs: Math.round(result.latencyMs),
    asOf: result.asOf,
    passes: result.passes ?? [],
    advisories: result.advisories ?? [],
    steps: result.steps.map((step) => ({
      number: step.number,
      tool: step.tool,
      ok: step.result.ok,
      ...(step.result.ok ? {} : { errorClass: step.result.error.class }),
      durationMs: Math.round(step.durationMs),
    })),
    ...(result.pending
      ? {
          pending: {
            approvalId: result.pending.approvalId,
            tool: result.pending.tool,
            step: result.pending.step,
          },
        }
      : {}),
    ...(result.termination ? { termination: { cause: result.termination.cause } } : {}),
  };
}

/** What an agent run reports to a client: the run, its visits and its events without operators' details. */
export function publicAgentRun(result: AgentRunResult) {
  return {
    runId: result.runId,
    status: result.status,
    ending: result.ending,
    finalAnswer: result.finalAnswer,
    visits: result.visits.map((visit) => ({
      agentId: visit.agentId,
      visit: visit.visit,
      status: visit.status,
      ...(visit.budgetExhausted ? { budgetExhausted: visit.budgetExhausted } : {}),
      turns: visit.turns,
      toolCalls: visit.toolCalls,
    })),
    events: result.events.map(publicAgentEvent),
  };
}

function publicAgentEvent(event: AgentEvent) {
  const { detail: _detail, ...shown } = event;
  return shown;
}

/** A small line: at most `size` turns run at once, the rest wait their turn. */
function createLimiter(size: number) {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running >= size) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

async function readJson(
  request: Request,
): Promise<{ ok: true; value: unknown } | { ok: false; error: string }> {
  const text = await request.text();
  if (text.length > 64 * 1024) return { ok: false, error: 'the body is larger than 64 KiB' };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, error: 'the body is not JSON' };
  }
}

/**
 * The server's HTTP API as a Hono app: every route but none asks for the
 * bearer token; turns run through the engine at most `maxConcurrentTurns`
 * at once, and `inFlight()` tells a graceful shutdown what it must wait for.
 *
 * - `GET /` and `/console/console.{js,css}`: the web console, without the token (it asks for it)
 * - `GET /api/health`
 * - `GET /api/openapi.json`: the OpenAPI 3.1 document of the routes mounted
 * - `POST /api/turns` `{ request }` → the turn as JSON; with `Accept: text/event-stream`
 *   server-sent events as the turn runs: `started`, `layer` and `pass` for each layer
 *   tried, `step` (started, finished) for each plan step, `approval` when a call waits
 *   for one, and `answer`
 * - `POST /api/turns/:id/feedback` `{ kind: up | down | retry }` → what the engine's one feedback path did
 *
 * @example
 * const app = createApp({ token, engine });
 * serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 8787 });
 */
export function createApp(settings: AppSettings) {
  const app = new Hono();
  // the console's page and files hold no data and no token: served before the token is asked for
  registerConsole(app);
  const limit = createLimiter(settings.maxConcurrentTurns ?? 4);
  const running = new Set<Promise<unknown>>();
  const track = <T>(promise: Promise<T>): Promise<T> => {
    running.add(promise);
    promise.finally(() => running.delete(promise)).catch(() => undefined);
    return promise;
  };

  app.use('*', async (c, next) => {
    if (!bearerMatches(c.req.header('authorization'), settings.token))
      return c.json({ error: 'unauthorized', message: 'this server needs its bearer token' }, 401);
    await next();
  });
  app.onError((error, c) => {
    // a mistake of the server's, never a stack trace for the client
    console.error(`metnos server: ${error instanceof Error ? error.message : String(error)}`);
    return c.json({ error: 'internal', message: 'the server could not finish this request' }, 500);
  });
  app.notFound((c) => c.json({ error: 'not_found', message: `no route ${c.req.method} ${c.req.path}` }, 404));

  app.get('/api/health', (c) => c.json({ ok: true, turnsInFlight: running.size }));
  // the document lists what this app mounts, made once, on first request
  let openapi: ReturnType<typeof openApiDocument> | undefined;
  app.get('/api/openapi.json', (c) => {
    openapi ??= openApiDocument(
      [
        ...consoleRouteDocs,
        ...coreRouteDocs,
        ...(settings.scheduler ? scheduleRouteDocs : []),
        ...apiRouteDocs(settings.api ?? {}),
        ...(settings.mcp ? mcpRouteDocs : []),
      ],
      { version: manifest.version },
    );
    return c.json(openapi);
  });
  if (settings.scheduler) registerScheduleRoutes(app, { scheduler: settings.scheduler });
  if (settings.api) registerApiRoutes(app, settings.api);
  const mcp = settings.mcp ? registerMcpRoute(app, settings.mcp) : undefined;

  app.post('/api/turns', async (c) => {
    const body = await readJson(c.req.raw);
    const parsed = body.ok ? turnBody.safeParse(body.value) : undefined;
    if (!body.ok || !parsed?.success)
      return c.json(
        { error: 'invalid', message: body.ok ? 'send { "request": "<text>" }' : body.error },
        400,
      );
    const request = parsed.data.request;
    const accept = c.req.header('accept') ?? '';
    const graph = parsed.data.agents;
    if (graph !== undefined) {
      if (!settings.agents?.names().includes(graph))
        return c.json({ error: 'invalid', message: `this server has no agent graph "${graph}"` }, 400);
      const agents = settings.agents;
      if (!accept.includes('text/event-stream'))
        return c.json(publicAgentRun(await track(limit(() => agents.run(graph, request)))));
      return streamSSE(c, async (stream) => {
        let written: Promise<unknown> = stream.writeSSE({
          event: 'started',
          data: JSON.stringify({ request, agents: graph }),
        });
        const send = (event: string, data: unknown) => {
          written = written
            .then(() => stream.writeSSE({ event, data: JSON.stringify(data) }))
            .catch(() => undefined);
        };
        const result = await track(
          limit(() =>
            agents.run(graph, request, { onEvent: (event) => send(event.type, publicAgentEvent(event)) }),
          ),
        );
        send('answer', publicAgentRun(result));
        await written;
      });
    }
    if (!accept.includes('text/event-stream'))
      return c.json(publicTurn(await track(limit(() => settings.engine.runTurn(request)))));
    return streamSSE(c, async (stream) => {
      // events are written in the order the turn reports them, as it reports them
      let written: Promise<unknown> = stream.writeSSE({
        event: 'started',
        data: JSON.stringify({ request }),
      });
      const send = (event: string, data: unknown) => {
        written = written
          .then(() => stream.writeSSE({ event, data: JSON.stringify(data) }))
          .catch(() => undefined);
      };
      const result = publicTurn(
        await track(
          limit(() => settings.engine.runTurn(request, { onEvent: (event) => send(event.type, event) })),
        ),
      );
      if (result.pending) send('approval', result.pending);
      send('answer', result);
      await written;
    });
  });

  app.post('/api/turns/:id/feedback', async (c) => {
    const turnId = c.req.param('id');
    if (!idParam.safeParse(turnId).success)
      return c.json({ error: 'invalid', message: 'not a turn id' }, 400);
    const body = await readJson(c.req.raw);
    const parsed = body.ok ? feedbackBody.safeParse(body.value) : undefined;
    if (!body.ok || !parsed?.success)
      return c.json({ error: 'invalid', message: 'send { "kind": "up" | "down" | "retry" }' }, 400);
    const outcome = await track(settings.engine.feedback(turnId, parsed.data.kind));
    if (!outcome.recorded)
      return c.json({ error: 'not_found', message: `memory has no turn ${turnId}` }, 404);
    return c.json({
      turnId,
      kind: outcome.kind,
      droppedShortcuts: outcome.droppedShortcuts.length,
      anti: outcome.anti,
      ...(outcome.retry ? { retried: publicTurn(outcome.retry) } : {}),
    });
  });

  return {
    app,
    fetch: app.fetch,
    /** Resolves when every turn and feedback under way has finished (MCP sessions are ended first). */
    drain: async () => {
      await mcp?.close();
      await Promise.allSettled([...running]);
    },
    inFlight: () => running.size,
  };
}
