import { isIPv4, isIPv6 } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { resolveConfigDir } from '@metnos/executor-sdk';
import {
  type ApprovalsFlow,
  claimStores,
  createApprovalsFlow,
  createMcpCallPath,
  createPendingCalls,
  createRemindersService,
  createTelegramChannel,
  createTelegramClient,
  isMcpCall,
  mnestomeAgerTask,
  nightlySteps,
  type SchedulerService,
  ServerTokenError,
  type StoresClaim,
  StoresOwnedError,
  serverToken,
  startSchedulerService,
  startServer,
  startTelemetry,
  syntSuggestTask,
  type TelegramChannel,
  type Telemetry,
  TelemetryError,
  TOKEN_FILE,
  telegramDelivery,
} from '@metnos/server';
import { openAgentGraphs } from '../agents.ts';
import { deviceAddress, devicesConfig, openDeviceStore, startDevices } from '../devices.ts';
import { CliFailure, type CliIo } from '../output.ts';
import { reminderChannels } from '../reminders.ts';
import { openSynt } from '../synt.ts';
import { trustedKeys } from '../workspace.ts';
import { engineKindOf, openLearningEngine, runtime } from './ask.ts';
import { integrityFindings } from './doctor-integrity.ts';
import { storeFindings } from './doctor-stores.ts';

export const SERVE_HELP = `metnos serve — the always-on assistant: the HTTP API of this workspace

Usage:
  metnos serve [--port 8787] [--host 127.0.0.1] [--executors <dir>] [--workspace <dir>] [--config-dir <dir>]

Runs the same learning engine as \`metnos ask\`, over the same memory, until SIGINT (Ctrl-C) or
SIGTERM; then it takes no new requests, lets the turns under way finish, closes the stores and
exits 0. Every request needs the bearer token \`metnos init\` made in <config dir>/server.token
(Authorization: Bearer <token>); the token is never printed.

Options:
  --port <n>            the port (default 8787; 0 picks a free one, printed on start)
  --host <address>      where to listen (default 127.0.0.1, this machine only); any other address
                        is reachable from the network and is only used when given here
  --executors <dir>     the executors folder
  --workspace <dir>     the workspace the executors work in
  --config-dir <dir>    where server.token is (default METNOS_CONFIG_DIR, else ~/.config/metnos)

Calls that need approval are not asked on the terminal: the turn ends pending, GET /api/approvals
lists the call with its hash, and POST /api/approvals/<id> {"decision": "approve", "callHash": "…"}
runs the request again with that call approved (the answer comes back in "resumed").
With [channels.telegram] in metnos.toml the bot answers its allowed chats, asks approvals with
buttons, and receives the results of schedules whose channel is telegram.
With [telemetry] otlp_endpoint in metnos.toml the engine's spans go to that OTLP/HTTP collector
(flushed on exit). Routes: GET /api/health, POST /api/turns {"request": "…"},
POST /api/turns/<id>/feedback {"kind": "up"}, /api/schedules (the scheduler runs in this process; its
store is scheduler.sqlite in the data dir); GET /api/openapi.json describes every route.
/mcp is an MCP endpoint (streamable HTTP, the same bearer token): the catalog's active executors as
tools; a call that needs approval is listed by GET /api/approvals, and the client calls again.
`;

/** 127.0.0.0/8, ::1 and localhost: addresses only this machine reaches. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost') return true;
  if (isIPv4(bare)) return bare.startsWith('127.');
  if (isIPv6(bare)) return bare === '::1' || /^::ffff:127\./.test(bare);
  return false;
}

function portOf(value: string | undefined): number {
  if (value === undefined) return 8787;
  const port = Number(value);
  if (!/^\d+$/.test(value) || !Number.isInteger(port) || port > 65535)
    throw new CliFailure(`--port must be a number from 0 to 65535, not "${value}"`, 2);
  return port;
}

/** Resolves at the first SIGINT or SIGTERM, with its name. */
function stopSignal(): { received: Promise<NodeJS.Signals>; dispose(): void } {
  let dispose = () => {};
  const received = new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => resolve(signal);
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    dispose = () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
  });
  return { received, dispose };
}

export async function serveCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      executors: { type: 'string' },
      workspace: { type: 'string' },
      'config-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.out(SERVE_HELP);
    return 0;
  }
  if (positionals.length > 0) {
    io.err(SERVE_HELP);
    return 2;
  }
  const port = portOf(values.port);
  const hostname = values.host ?? '127.0.0.1';
  if (hostname.trim() === '') throw new CliFailure('--host needs an address', 2);

  // the token first: without it nothing else is worth building
  const configDir = resolveConfigDir(values['config-dir']);
  let token: string;
  try {
    token = serverToken(configDir);
  } catch (error) {
    if (error instanceof ServerTokenError) throw new CliFailure(error.message, 2);
    throw error;
  }

  // the warm pool is on by default here: request after request, each step's process is already started
  const context = await runtime({ executors: values.executors, workspace: values.workspace, pool: true });
  // one server owns the stores of a data folder: a second one is refused before it opens any
  let claim: StoresClaim;
  try {
    claim = claimStores(context.data);
  } catch (error) {
    if (error instanceof StoresOwnedError) throw new CliFailure(error.message, 1);
    throw error;
  }
  try {
    return await serveWith({ context, io, configDir, token, hostname, port });
  } finally {
    claim.release();
  }
}

/** The server over a data folder this process has claimed. */
async function serveWith(settings: {
  context: Awaited<ReturnType<typeof runtime>>;
  io: CliIo;
  configDir: string;
  token: string;
  hostname: string;
  port: number;
}): Promise<number> {
  const { context, io, configDir, token, hostname, port } = settings;
  // the bot token, when a chat channel is configured, before anything is built: the file names its variable
  const telegramConfig = context.config.channels?.telegram;
  const botToken = telegramConfig && process.env[telegramConfig.bot_token_env];
  if (telegramConfig && !botToken)
    throw new CliFailure(
      `[channels.telegram] in metnos.toml: the environment variable ${telegramConfig.bot_token_env} (bot_token_env) is not set; put the bot token in it`,
      2,
    );
  // [telemetry]: the engine's spans go to an OTLP collector; without it no SDK is registered
  let telemetry: Telemetry | undefined;
  const telemetryConfig = context.config.telemetry;
  if (telemetryConfig) {
    try {
      telemetry = startTelemetry({
        endpoint: telemetryConfig.otlp_endpoint,
        serviceName: telemetryConfig.service_name,
      });
    } catch (error) {
      if (error instanceof TelemetryError)
        throw new CliFailure(`[telemetry] in metnos.toml: ${error.message}`, 2);
      throw error;
    }
    io.err(`metnos serve: telemetry: sending traces to ${telemetryConfig.otlp_endpoint}`);
  }
  // the server drives the learning engine; a workspace set to the loop engine gets its default
  const kind = engineKindOf(undefined, context.config);
  if (kind === 'loop')
    io.err('note: the server runs the learning engine ([runtime] engine = "loop" is for ask)');
  // an approval decided over HTTP or Telegram lets the flow's re-run of its turn run that call
  let flow: ApprovalsFlow | undefined;
  // reminders executors ask (host:reminders) go to this process's scheduler, made below, which fires them
  let schedules: SchedulerService | undefined;
  const reminders = createRemindersService({
    scheduler: () => {
      if (!schedules) throw new Error('the scheduler is not running yet');
      return schedules.scheduler;
    },
    ...reminderChannels(context.config),
  });
  const { engine, memory, close, invoker, parts, stores, mnestome } = await openLearningEngine(context, io, {
    yes: false,
    ask: false,
    variant: kind === 'loop' ? 'learning' : kind,
    approved: async (call) => (flow ? flow.approved(call) : false),
    hostServices: { reminders },
  });
  // the synt over the engine's own catalog and mnestome: what it installs, the engine plans with at once
  let synt: Awaited<ReturnType<typeof openSynt>>;
  try {
    synt = await openSynt(context, (line) => io.err(`metnos serve: ${line}`), {
      orDoWithout: true,
      mnestome,
      catalog: parts.catalog,
    });
  } catch (error) {
    close();
    throw error;
  }
  let telegram: TelegramChannel | undefined;
  const pending = createPendingCalls();
  flow = createApprovalsFlow({
    engine,
    approvals: parts.vaglio.approvals,
    catalog: parts.catalog,
    pending,
    deliver: async (origin, text) => telegram?.deliver(origin.chatId, text),
    onWarning: (message) => io.err(`metnos serve: ${message}`),
  });
  // every turn, the HTTP API's and the scheduler's, goes through the flow, which holds the calls it stops at
  const served = flow.wrap(engine);
  if (telegramConfig && botToken) {
    const log = (message: string, fields?: Record<string, unknown>) =>
      io.err(`metnos serve: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`);
    telegram = createTelegramChannel({
      client: createTelegramClient({ token: botToken, baseUrl: telegramConfig.base_url }),
      allowedChatIds: telegramConfig.allowed_chat_ids,
      ...flow.telegram,
      logger: { info: log, warn: log },
    });
  }
  // [devices] listen: the device channel paired laptops dial, its devices in devices.sqlite of the data dir
  const devices = devicesConfig(context.place);
  const deviceStore = openDeviceStore(context.data);
  let hub: Awaited<ReturnType<typeof startDevices>>;
  try {
    hub = await startDevices({
      place: context.place,
      config: devices,
      store: deviceStore,
      executor: (name) => parts.catalog.get(name),
      trustedKeys: await trustedKeys(context.place, context.place.executors),
      log: (line) => io.err(`metnos serve: devices: ${line}`),
    });
  } catch (error) {
    deviceStore.close();
    synt.close();
    close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new CliFailure(`[devices] listen = "${devices.listen}" is in use`, 1);
    throw error;
  }
  if (hub)
    io.err(
      `metnos serve: devices: the device channel listens on ${hub.url} (laptops dial ${deviceAddress(devices)})`,
    );
  const stop = stopSignal();
  // the scheduler lives in this process, its firings audited with the scheduler as caller, memory
  // aging daily at 04:00 as a built-in. Its store is in the data dir, beside memory and approvals,
  // not under the workspace: executors may write the workspace, and one that could add a schedule
  // would run calls nobody asked for.
  schedules = startSchedulerService({
    path: join(context.data, 'scheduler.sqlite'),
    engine: served,
    invoker,
    ...(telegram
      ? {
          deliver: telegramDelivery(
            telegram,
            telegramConfig?.default_chat_id ?? telegramConfig?.allowed_chat_ids[0],
          ),
        }
      : {}),
    workspace: context.place.workspace,
    // 04:30 nightly: the mnestome's ager (below_threshold proposals land in the run's summary), then
    // synt_suggest, which files the synt's proposal cards for the console and `metnos synt`
    synt: nightlySteps(
      mnestomeAgerTask({
        mnestome,
        executors: () => parts.catalog.executors().map((executor) => executor.name),
      }),
      syntSuggestTask({ synt: synt.synt }),
    ),
    onError: (error) =>
      io.err(`metnos serve: a scheduler tick failed: ${(error as Error)?.message ?? error}`),
  });
  // the [agents.<name>] graphs, for POST /api/turns with "agents": calls needing a confirmation do not run
  const agentGraphs = await openAgentGraphs(context, { parts });
  const polling = new AbortController();
  let telegramRun: Promise<void> | undefined;
  try {
    let server: Awaited<ReturnType<typeof startServer>>;
    try {
      server = await startServer({
        token,
        engine: served,
        hostname,
        port,
        scheduler: schedules.scheduler,
        agents: agentGraphs,
        api: {
          memory: stores,
          executors: { catalog: parts.catalog },
          approvals: {
            approvals: parts.vaglio.approvals,
            pending,
            // an MCP client's call resumes no turn: the approval lets the client's next identical call run
            onDecision: (decision) => {
              if (!isMcpCall(decision.call)) return flow!.onDecision(decision);
              pending.remove(decision.approvalId);
              return { mcp: decision.approved ? 'approved: the client may call again' : 'denied' };
            },
          },
          audit: { auditDir: join(context.place.workspace, '.audit') },
          proposals: { synt: synt.synt, actor: `${context.config.runtime.actor} (console)` },
          devices: {
            store: deviceStore,
            ...(hub ? { hub } : {}),
            ...(deviceAddress(devices) ? { address: deviceAddress(devices) } : {}),
            actor: `${context.config.runtime.actor} (console)`,
          },
          // the same checks as `metnos doctor --json`, never with repair: a GET changes nothing
          doctor: {
            integrity: () => integrityFindings(context.place),
            stores: () => storeFindings(context.data),
          },
        },
        // MCP clients get the catalog's active executors, each call through the vaglio and the sandbox
        mcp: {
          catalog: parts.catalog,
          allowedHosts: ['localhost', '127.0.0.1', '[::1]', ...(isLoopback(hostname) ? [] : [hostname])],
          path: createMcpCallPath({
            catalog: parts.catalog,
            invoker: parts.invoker,
            reviewer: parts.vaglio,
            approvals: parts.vaglio.approvals,
            held: {
              hold: ({ approvalId, call }) => pending.add({ approvalId, call }),
              release: (approvalId) => pending.remove(approvalId),
            },
            workspace: context.place.workspace,
            home: homedir(),
            executorConfig: context.config.executors?.config,
          }),
        },
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE')
        throw new CliFailure(`${hostname}:${port} is in use (another metnos serve?); try --port`, 1);
      if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
        throw new CliFailure(`cannot listen on ${hostname}: no such address on this machine`, 2);
      throw error;
    }
    if (!isLoopback(hostname))
      io.err(
        `warning: listening on ${hostname}, not only this machine: anyone who reaches port ${server.port} can send requests, and only the bearer token stops them (plain HTTP: put TLS in front of it)`,
      );
    if (telegram && telegramConfig) {
      telegramRun = telegram.run(polling.signal);
      io.err(
        `metnos serve: telegram: answering ${telegramConfig.allowed_chat_ids.length} allowed chat${telegramConfig.allowed_chat_ids.length === 1 ? '' : 's'}`,
      );
    }
    io.out(
      `metnos serve: listening on ${server.url} (${kind === 'loop' ? 'learning' : kind} engine${memory}; bearer token in ${join(configDir, TOKEN_FILE)}; Ctrl-C stops)`,
    );
    const signal = await stop.received;
    const waiting = server.inFlight();
    io.err(
      `metnos serve: ${signal}, stopping${waiting > 0 ? `: waiting for ${waiting} turn${waiting === 1 ? '' : 's'} under way` : ''}`,
    );
    // no new chat messages; the turns they started finish, as the HTTP ones do
    polling.abort();
    await Promise.all([server.close(), telegramRun]);
    io.err('metnos serve: stopped');
    return 0;
  } finally {
    stop.dispose();
    polling.abort();
    await telegramRun?.catch(() => undefined);
    await schedules.stop();
    await hub?.close();
    deviceStore.close();
    synt.close();
    agentGraphs.close();
    close();
    // the spans still batched go out before the process ends
    await telemetry
      ?.shutdown()
      .catch((error: unknown) =>
        io.err(
          `metnos serve: telemetry: the last spans were not sent: ${(error as Error)?.message ?? error}`,
        ),
      );
  }
}
