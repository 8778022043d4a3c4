import { type KeyObject, X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import type { ExecutorRunner } from '@metnos/executor-sdk';
import { parseServerAddress } from './address.ts';
import { createLaptopAuditLog } from './audit.ts';
import { createExecutorCache } from './cache.ts';
import { type Confinement, createLaptopRunner, defaultConfinement } from './confinement.ts';
import { createGuard, type Guard } from './guard.ts';
import { type DeviceIdentity, loadIdentity } from './identity.ts';
import { createLedger } from './ledger/ledger.ts';
import type { LaptopPlaces } from './places.ts';
import { RemoteError } from './protocol/errors.ts';
import type { FileEntry } from './protocol/files.ts';
import {
  createFrameReader,
  encodeFrame,
  type LaptopFrame,
  type ServerFrame,
  serverFrameSchema,
} from './protocol/frames.ts';
import { SERVER_COMMON_NAME, TLS_VERSION } from './protocol/index.ts';
import { createLaptopRuntime } from './runtime.ts';

/** Settings of {@link startLaptopAgent}. */
export interface LaptopAgentSettings {
  places: LaptopPlaces;
  /** How remote executors are confined (default: the sandbox on Linux, the permission model elsewhere). */
  confinement?: Confinement;
  /** A runner to use instead (tests). */
  runner?: ExecutorRunner;
  /** Reconnect delays: the first, and the most it grows to (default 250 ms and 30 s). */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /** The agent's version, sent in its hello. */
  version?: string;
}

/** The running agent. */
export interface LaptopAgent {
  readonly device: string;
  /** Resolves when the agent stops for good: asked to, or the server revoked this device. */
  readonly stopped: Promise<{ reason: 'stopped' | 'revoked' | 'refused'; message: string }>;
  /** Connected and welcomed by the server right now. */
  connected(): boolean;
  stop(): Promise<void>;
}

/**
 * Runs the laptop agent: dials the server's device channel with mutual TLS
 * (TLS 1.3 only, the server's certificate pinned to the CA from pairing, this
 * device's own certificate presented), says hello with the executors it has
 * cached, and serves the server's calls, updates and undos one at a time
 * through the {@link createLaptopRuntime} runtime. A dropped link is dialled
 * again with exponential backoff and jitter; a call cut off mid-way is
 * finished when the server delivers its key again.
 *
 * @example
 * const agent = await startLaptopAgent({ places: laptopPlaces({}), log: console.error });
 * await agent.stopped;
 */
export async function startLaptopAgent(settings: LaptopAgentSettings): Promise<LaptopAgent> {
  const { places } = settings;
  const log = settings.log ?? (() => {});
  const identity: DeviceIdentity = await loadIdentity(places);
  const address = parseServerAddress(identity.server);
  const ledger = createLedger({ path: join(places.stateDir, 'ledger.sqlite') });
  const audit = createLaptopAuditLog({ dir: join(places.stateDir, 'audit') });
  const cache = createExecutorCache({ dir: join(places.stateDir, 'cache'), trustedKeys: identity.keys });
  const confinement = settings.confinement ?? defaultConfinement();
  const runner =
    settings.runner ??
    createLaptopRunner({
      confinement,
      home: places.home,
      configDir: places.configDir,
      onRefusal: audit.sandbox,
    });
  let guard: Guard | undefined;
  const runtime = createLaptopRuntime({
    device: identity.device,
    ledger,
    cache,
    runner,
    audit,
    trashDir: join(places.stateDir, 'trash'),
    guard: async () => {
      if (!identity.grant) return undefined;
      guard ??= await createGuard({
        grant: identity.grant,
        home: places.home,
        configDir: places.configDir,
        stateDir: places.stateDir,
      });
      return guard;
    },
    log,
  });

  const initialMs = settings.backoff?.initialMs ?? 250;
  const maxMs = settings.backoff?.maxMs ?? 30_000;
  let delay = initialMs;
  let socket: TLSSocket | undefined;
  let welcomed = false;
  let stopping = false;
  let retry: NodeJS.Timeout | undefined;
  let finish!: (value: { reason: 'stopped' | 'revoked' | 'refused'; message: string }) => void;
  const stopped = new Promise<{ reason: 'stopped' | 'revoked' | 'refused'; message: string }>((resolve) => {
    finish = resolve;
  });
  /** Before manifests waiting for the server's acknowledgement, by key. */
  const acks = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();
  /** Calls, undos and updates run one after the other. */
  let queue: Promise<unknown> = Promise.resolve();

  const stopFor = (reason: 'stopped' | 'revoked' | 'refused', message: string) => {
    if (stopping) return;
    stopping = true;
    clearTimeout(retry);
    socket?.destroy();
    finish({ reason, message });
  };

  function dial(): void {
    if (stopping) return;
    welcomed = false;
    const current = connect({
      host: address.host,
      port: address.port,
      key: identity.key,
      cert: identity.certificate,
      ca: [identity.ca],
      minVersion: TLS_VERSION,
      maxVersion: TLS_VERSION,
      // the server is known by its CA and its role, not by the name it is reached at
      checkServerIdentity: (_host, certificate) =>
        certificate.subject?.CN === SERVER_COMMON_NAME
          ? undefined
          : new Error(
              `the server presented a certificate for "${certificate.subject?.CN}", not ${SERVER_COMMON_NAME}`,
            ),
    });
    socket = current;
    let serverKey: KeyObject | undefined;
    const send = (frame: LaptopFrame) => {
      if (!current.destroyed) current.write(encodeFrame(frame));
    };
    current.setKeepAlive(true, 10_000);
    current.on('secureConnect', async () => {
      const peer = current.getPeerX509Certificate();
      serverKey = peer?.publicKey;
      log(`connected to ${address.text}`);
      send({
        type: 'hello',
        agent: settings.version ?? '0.1.0',
        platform: process.platform,
        tier: runner.tier,
        cache: await cache.list(),
      });
    });
    current.on(
      'data',
      createFrameReader(
        serverFrameSchema,
        (frame) => handle(frame, send, () => serverKey),
        (error) => {
          log(`the server sent a bad frame (${error.message}); reconnecting`);
          current.destroy();
        },
      ),
    );
    current.on('error', (error) => log(`link: ${error.message}`));
    current.on('close', () => {
      for (const [key, waiter] of acks) {
        waiter.reject(
          new RemoteError({
            code: 'unreachable',
            message: 'the link dropped before the server recorded the before manifest',
          }),
        );
        acks.delete(key);
      }
      if (stopping) return;
      const wait = Math.round(delay * (0.5 + Math.random() / 2));
      delay = Math.min(maxMs, delay * 2);
      log(`link down; dialling again in ${wait} ms`);
      retry = setTimeout(dial, wait);
    });
  }

  function handle(
    frame: ServerFrame,
    send: (frame: LaptopFrame) => void,
    serverKey: () => KeyObject | undefined,
  ): void {
    switch (frame.type) {
      case 'welcome':
        welcomed = true;
        delay = initialMs;
        log(`welcomed as ${frame.name} (${frame.device})`);
        return;
      case 'bye':
        log(`the server ended the link: ${frame.reason}`);
        if (frame.code === 'revoked') stopFor('revoked', frame.reason);
        else if (frame.code === 'unknown_device') stopFor('refused', frame.reason);
        return;
      case 'before-ack': {
        const waiter = acks.get(frame.key);
        acks.delete(frame.key);
        waiter?.resolve();
        return;
      }
      case 'call':
      case 'undo':
      case 'update': {
        const link = {
          confirmBefore: (key: string, trace: string, entries: FileEntry[]) =>
            new Promise<void>((resolve, reject) => {
              acks.set(key, { resolve, reject });
              send({ type: 'before', key, trace, entries });
            }),
        };
        queue = queue
          .then(async () => {
            const key = serverKey();
            if (frame.type === 'update') return send(await runtime.install(frame));
            if (!key) return;
            send(
              frame.type === 'call'
                ? await runtime.call(frame, key, link)
                : await runtime.undo(frame, key, link),
            );
          })
          .catch((error: unknown) => {
            // a call cut off by the link stays in the ledger; it resumes when its key comes again
            log(`${frame.type}: ${(error as Error)?.message ?? String(error)}`);
          });
        return;
      }
      default:
        log(`ignoring a ${frame.type} frame`);
    }
  }

  dial();
  return {
    device: identity.device,
    stopped,
    connected: () => welcomed && socket !== undefined && !socket.destroyed,
    async stop() {
      stopFor('stopped', 'asked to stop');
      await queue.catch(() => undefined);
      ledger.close();
    },
  };
}

/** The certificate of the pinned CA, for `metnos-laptop status`. */
export function caFingerprint(identity: DeviceIdentity): string {
  return new X509Certificate(identity.ca).fingerprint256;
}
