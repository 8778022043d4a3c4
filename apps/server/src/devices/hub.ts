import { createHash, createPublicKey, randomBytes, verify, X509Certificate as X509 } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createServer, type TLSSocket } from 'node:tls';
import {
  ARTEFACTS,
  appendToAuditTree,
  type Caller,
  type PublicKey,
  serializePublicKey,
  summarizeInput,
  type VerifiedExecutor,
} from '@metnos/executor-sdk';
import {
  argsDigest,
  createFrameReader,
  devicePairingProof,
  encodeFrame,
  type FileEntry,
  type LaptopFrame,
  laptopFrameSchema,
  possessionStatement,
  proofMatches,
  type RemoteResult,
  type ServerFrame,
  serverPairingProof,
  signCallToken,
  TLS_VERSION,
  UNDO_EXECUTOR,
} from '@metnos/laptop-agent/protocol';
import type { DeviceAuthority } from './authority.ts';
import { remotePolicyRefusal } from './policy.ts';
import { type Device, type DeviceStore, newDeviceId, type RemoteCallRecord } from './store.ts';

/** Settings of {@link startDeviceHub}. */
export interface DeviceHubSettings {
  store: DeviceStore;
  authority: DeviceAuthority;
  /** A verified executor of the server's catalog by name (the canonical copy the laptop's cache must match). */
  executor: (name: string) => VerifiedExecutor | undefined | Promise<VerifiedExecutor | undefined>;
  /** The keys the server trusts for executor signatures, given to a device when it pairs. */
  trustedKeys: readonly PublicKey[];
  /** The workspace whose audit tree (`.audit/executors`) gets each call's two lines. */
  workspace: string;
  /** Where the device channel listens (default 127.0.0.1, port 8788; 0 picks one). */
  host?: string;
  port?: number;
  /** Push the server's copy when a laptop's cached executor has drifted (default true). */
  pushUpdates?: boolean;
  /** How long a call waits for its device, reconnects included (default 10 minutes). */
  callTimeoutMs?: number;
  now?: () => number;
  log?: (line: string) => void;
}

/** What a remote call or undo comes back with. */
export interface RemoteCallOutcome {
  key: string;
  trace: string;
  device: string;
  result: RemoteResult;
  manifest?: { before: FileEntry[]; after: FileEntry[] };
  /** The laptop answered from its ledger: the key had run before. */
  replayed?: boolean;
}

interface Pending {
  record: Pick<
    RemoteCallRecord,
    'key' | 'trace' | 'device' | 'executor' | 'version' | 'args' | 'caller' | 'undoOf'
  >;
  /** The frame to deliver, with a fresh token each time it is sent. */
  frame: () => ServerFrame;
  started: number;
  updates: number;
  resolve: (outcome: RemoteCallOutcome) => void;
  timer: NodeJS.Timeout;
}

interface Link {
  socket: TLSSocket;
  device: string;
  welcomed: boolean;
  send(frame: ServerFrame): void;
}

const failure = (errorClass: string, message: string): RemoteResult => ({
  ok: false,
  error: { class: errorClass, message },
});
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * The server's end of the device channel: a TLS 1.3 listener that asks every
 * peer for a certificate of the installation's CA. A peer without one may
 * only pair (with a one-time code); a peer with one is the device it names,
 * while the store says that device is active. Calls go to a device with a
 * fresh signed token at every delivery and the same idempotency key, so a
 * call cut off by a dropped link is delivered again when the device dials
 * back, and runs once. A cached executor that drifted gets the server's copy
 * pushed, then the call again. Every call leaves two lines in the audit tree,
 * the server's and the laptop's, with the same trace id.
 *
 * @example
 * const hub = await startDeviceHub({ store, authority, executor: (name) => catalog.get(name), trustedKeys, workspace });
 * const outcome = await hub.call('ada-laptop', 'photo_organize', { folder: '.' }, { caller: { kind: 'cli' } });
 */
export async function startDeviceHub(settings: DeviceHubSettings) {
  const { store, authority } = settings;
  const now = settings.now ?? Date.now;
  const log = settings.log ?? (() => {});
  const pushUpdates = settings.pushUpdates ?? true;
  const links = new Map<string, Link>();
  const pending = new Map<string, Pending>();

  async function auditLine(line: Record<string, unknown>): Promise<void> {
    const ts = String(line.ts);
    await appendToAuditTree(settings.workspace, 'executors', ts, JSON.stringify(line)).catch(
      (error: unknown) => log(`audit: ${(error as Error).message}`),
    );
  }

  /** A refused peer or frame: logged, and written to the audit tree. */
  async function refuse(
    socket: TLSSocket,
    reason: string,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    log(`refused ${socket.remoteAddress ?? '?'}: ${reason}`);
    await auditLine({
      ts: new Date(now()).toISOString(),
      event: 'device_refused',
      side: 'server',
      peer: socket.remoteAddress,
      reason,
      ...extra,
    });
  }

  async function finish(
    key: string,
    outcome: Omit<RemoteCallOutcome, 'key' | 'trace' | 'device'> & { laptop?: LaptopFrame },
  ): Promise<void> {
    const waiting = pending.get(key);
    const recorded = store.call(key);
    if (recorded?.state !== 'pending') return;
    const laptopAudit =
      outcome.laptop?.type === 'result' ? { ...outcome.laptop.audit, device: recorded.device } : undefined;
    store.finishCall(key, {
      result: outcome.result,
      ...(outcome.manifest ? { before: outcome.manifest.before, after: outcome.manifest.after } : {}),
      ...(laptopAudit ? { laptopAudit } : {}),
      failed: outcome.laptop?.type !== 'result',
    });
    const device = store.device(recorded.device);
    const result = outcome.result;
    await auditLine({
      ts: new Date(now()).toISOString(),
      trace_id: recorded.trace,
      executor: recorded.executor,
      ...(recorded.version ? { version: recorded.version } : {}),
      caller: recorded.caller,
      input: summarizeInput(recorded.args),
      duration_ms: waiting ? now() - waiting.started : 0,
      exit: result.ok ? 'ok' : outcome.laptop?.type === 'result' ? 'error' : 'refused',
      ...(result.ok ? {} : { error_class: result.error?.class }),
      side: 'server',
      remote: {
        device: recorded.device,
        name: device?.name,
        key,
        ...(result.isolation ? { tier: result.isolation.tier } : {}),
        ...(outcome.manifest
          ? { before: outcome.manifest.before.length, after: outcome.manifest.after.length }
          : {}),
        ...(outcome.replayed ? { replayed: true } : {}),
      },
    });
    if (laptopAudit) await auditLine({ ...laptopAudit, side: 'laptop', reported_by: recorded.device });
    if (waiting) {
      clearTimeout(waiting.timer);
      pending.delete(key);
      waiting.resolve({
        key,
        trace: recorded.trace,
        device: recorded.device,
        result,
        ...(outcome.manifest ? { manifest: outcome.manifest } : {}),
        ...(outcome.replayed ? { replayed: true } : {}),
      });
    }
  }

  /** Delivers a pending call when its device is connected and welcomed. */
  function deliver(item: Pending): void {
    const link = links.get(item.record.device);
    if (link?.welcomed) link.send(item.frame());
  }

  async function pushUpdate(link: Link, name: string): Promise<void> {
    const executor = await settings.executor(name);
    if (!executor) return;
    const files: Record<string, string> = {};
    for (const file of [ARTEFACTS.manifest, ARTEFACTS.signature, ARTEFACTS.schema, ARTEFACTS.profileLock])
      files[file] = (await readFile(join(executor.dir, file))).toString('base64');
    // the bytes that were verified, not the file as it may be now
    files[executor.manifest.executor.entry] = executor.code.toString('base64');
    log(`pushing ${name}@${executor.version} to ${link.device}`);
    link.send({ type: 'update', executor: name, version: executor.version, files });
  }

  async function onDeviceFrame(link: Link, frame: LaptopFrame): Promise<void> {
    const device = store.device(link.device);
    if (device?.state !== 'active') {
      link.send({ type: 'bye', code: 'revoked', reason: 'this device was revoked' });
      link.socket.end();
      await refuse(link.socket, 'a frame from a revoked device', { device: link.device });
      return;
    }
    switch (frame.type) {
      case 'hello':
        store.seen(link.device, { platform: frame.platform, tier: frame.tier });
        link.welcomed = true;
        link.send({ type: 'welcome', device: device.id, name: device.name });
        log(`${device.name} (${device.id}) connected: ${frame.platform}, tier ${frame.tier}`);
        for (const item of pending.values()) if (item.record.device === link.device) deliver(item);
        return;
      case 'before': {
        const recorded = store.call(frame.key);
        if (!recorded || recorded.device !== link.device)
          return refuse(link.socket, 'a before manifest for a call it was not sent', { device: link.device });
        store.recordBefore(frame.key, frame.entries);
        link.send({ type: 'before-ack', key: frame.key });
        return;
      }
      case 'result': {
        const recorded = store.call(frame.key);
        if (!recorded || recorded.device !== link.device)
          return refuse(link.socket, 'a result for a call it was not sent', { device: link.device });
        return finish(frame.key, {
          result: frame.result,
          ...(frame.manifest ? { manifest: frame.manifest } : {}),
          replayed: frame.replayed,
          laptop: frame,
        });
      }
      case 'drift': {
        const item = pending.get(frame.key);
        if (!item) return;
        log(`${device.name}: ${frame.reason}`);
        if (!pushUpdates || item.updates >= 2)
          return finish(frame.key, {
            result: failure(
              'ExecutorDrift',
              `${frame.reason}; the update was ${pushUpdates ? 'refused' : 'not pushed'}`,
            ),
          });
        item.updates++;
        return pushUpdate(link, frame.executor);
      }
      case 'updated':
        log(`${device.name} installed ${frame.executor}@${frame.version}`);
        for (const item of pending.values())
          if (item.record.device === link.device && item.record.executor === frame.executor) deliver(item);
        return;
      case 'update-refused':
        for (const item of [...pending.values()])
          if (item.record.device === link.device && item.record.executor === frame.executor)
            await finish(item.record.key, {
              result: failure('ExecutorDrift', `the laptop refused the update: ${frame.reason}`),
            });
        return;
      case 'refused':
        log(`${device.name} refused ${frame.key ?? 'a frame'} (${frame.code}): ${frame.reason}`);
        if (frame.key)
          await finish(frame.key, {
            result: failure('Refused', `the laptop refused the call (${frame.code}): ${frame.reason}`),
          });
        return;
      default:
        return refuse(link.socket, `a ${frame.type} frame from a paired device`, { device: link.device });
    }
  }

  /** Pairing over a link without a certificate: the code proves both sides. */
  function servePairing(socket: TLSSocket): void {
    let challenge: { lookup: string; nonce: string } | undefined;
    const send = (frame: ServerFrame) => socket.write(encodeFrame(frame));
    const refusePairing = async (reason: string) => {
      send({ type: 'pair-refused', reason });
      socket.end();
      await refuse(socket, `pairing: ${reason}`);
    };
    socket.setTimeout(30_000, () => socket.destroy());
    socket.on(
      'data',
      createFrameReader(
        laptopFrameSchema,
        (frame) => {
          void (async () => {
            if (frame.type === 'pair-hello') {
              const pairing = store.pairing(frame.lookup);
              if (!pairing || challenge)
                return refusePairing('no such open pairing code (mistyped, used, or expired)');
              challenge = { lookup: frame.lookup, nonce: randomBytes(24).toString('base64url') };
              const proof = serverPairingProof(
                Buffer.from(pairing.secret, 'hex'),
                challenge.nonce,
                new X509(authority.ca).raw,
              );
              return send({ type: 'pair-challenge', nonce: challenge.nonce, ca: authority.ca, proof });
            }
            if (frame.type !== 'pair-request')
              return refusePairing(`a ${frame.type} frame without a device certificate`);
            const pairing = store.pairing(frame.lookup);
            if (
              !challenge ||
              !pairing ||
              frame.lookup !== challenge.lookup ||
              frame.nonce !== challenge.nonce
            )
              return refusePairing("the pairing request does not answer this link's challenge");
            const spki = Buffer.from(frame.publicKey, 'base64');
            const secret = Buffer.from(pairing.secret, 'hex');
            if (!proofMatches(frame.proof, devicePairingProof(secret, challenge.nonce, spki))) {
              store.failPairing(frame.lookup);
              return refusePairing('the device does not know the code');
            }
            let holds = false;
            try {
              const key = createPublicKey({ key: spki, format: 'der', type: 'spki' });
              holds =
                key.asymmetricKeyType === 'ec' &&
                key.asymmetricKeyDetails?.namedCurve === 'prime256v1' &&
                verify(
                  'sha256',
                  possessionStatement(challenge.nonce, spki, frame.name),
                  key,
                  Buffer.from(frame.signature, 'base64'),
                );
            } catch {
              holds = false;
            }
            if (!holds) {
              store.failPairing(frame.lookup);
              return refusePairing('the device did not prove it holds a P-256 key');
            }
            const id = newDeviceId();
            const certificate = await authority.issueDevice(id, spki);
            const admitted = store.admit(frame.lookup, {
              id,
              name: frame.name,
              publicKey: frame.publicKey,
              fingerprint: sha256(new X509(certificate).raw),
              executors: pairing.executors,
            });
            if (!admitted) return refusePairing('the code was used meanwhile');
            log(`paired ${frame.name} as ${id}`);
            send({
              type: 'pair-done',
              device: id,
              name: frame.name,
              certificate,
              trustedKeys: settings.trustedKeys.map(serializePublicKey),
            });
            socket.end();
          })().catch((error: unknown) => {
            log(`pairing: ${(error as Error).message}`);
            socket.destroy();
          });
        },
        (error) => void refusePairing(error.message),
      ),
    );
  }

  function serveDevice(socket: TLSSocket, device: Device): void {
    const link: Link = {
      socket,
      device: device.id,
      welcomed: false,
      send: (frame) => {
        if (!socket.destroyed) socket.write(encodeFrame(frame));
      },
    };
    links.get(device.id)?.socket.destroy();
    links.set(device.id, link);
    socket.setKeepAlive(true, 10_000);
    let chain = Promise.resolve();
    socket.on(
      'data',
      createFrameReader(
        laptopFrameSchema,
        (frame) => {
          chain = chain
            .then(() => onDeviceFrame(link, frame))
            .catch((error: unknown) => log(`device ${device.id}: ${(error as Error).message}`));
        },
        (error) => {
          void refuse(socket, error.message, { device: device.id });
          socket.destroy();
        },
      ),
    );
    socket.on('close', () => {
      if (links.get(device.id) === link) links.delete(device.id);
    });
  }

  const server = createServer(
    {
      key: authority.server.key,
      cert: authority.server.certificate,
      ca: [authority.ca],
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: TLS_VERSION,
      maxVersion: TLS_VERSION,
    },
    (socket) => {
      socket.on('error', () => socket.destroy());
      const peer = socket.getPeerX509Certificate();
      if (!peer) return servePairing(socket);
      const id = /(?:^|\n)CN=(dev_[a-z0-9]{8,32})(?:\n|$)/.exec(peer.subject)?.[1];
      const device = id ? store.device(id) : undefined;
      if (!socket.authorized || !device || device.fingerprint !== sha256(peer.raw)) {
        void refuse(
          socket,
          socket.authorized
            ? 'a certificate of no paired device'
            : `a certificate not issued by this installation (${socket.authorizationError})`,
        );
        socket.write(
          encodeFrame({
            type: 'bye',
            code: 'unknown_device',
            reason: 'this server does not know this certificate',
          }),
        );
        return socket.end();
      }
      if (device.state !== 'active') {
        void refuse(socket, 'a revoked device', { device: device.id });
        socket.write(encodeFrame({ type: 'bye', code: 'revoked', reason: 'this device was revoked' }));
        return socket.end();
      }
      serveDevice(socket, device);
    },
  );
  server.on('tlsClientError', (error, socket) => {
    void refuse(socket, `TLS: ${error.message}`);
  });
  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port ?? 8788, settings.host ?? '127.0.0.1', () =>
      resolve(server.address() as AddressInfo),
    );
  });

  /** Sends a call (or undo) and resolves with its outcome, whatever the link does meanwhile. */
  function dispatch(record: Pending['record'], frame: () => ServerFrame): Promise<RemoteCallOutcome> {
    store.startCall(record);
    return new Promise((resolve) => {
      const item: Pending = {
        record,
        frame,
        started: now(),
        updates: 0,
        resolve,
        timer: setTimeout(
          () =>
            void finish(record.key, {
              result: failure(
                'Unreachable',
                `${record.device} did not answer in ${Math.round((settings.callTimeoutMs ?? 600_000) / 1000)} s`,
              ),
            }),
          settings.callTimeoutMs ?? 600_000,
        ),
      };
      pending.set(record.key, item);
      deliver(item);
    });
  }

  const newKey = () => randomBytes(16).toString('base64url');

  return {
    /** `tls://host:port`, what a laptop pairs with. */
    url: `tls://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`,
    port: address.port,
    /** Is the device connected and welcomed now? */
    connected: (device: string) => links.get(device)?.welcomed === true,
    /**
     * Runs an approved executor on a device: refused at once (as data) when
     * the device is unknown or revoked, the executor not approved for it or
     * not in the catalog, or the server's policy refuses its profile or
     * arguments.
     */
    async call(
      idOrName: string,
      name: string,
      args: unknown,
      options: { caller: Caller; trace?: string },
    ): Promise<RemoteCallOutcome> {
      const device = store.find(idOrName);
      const trace = options.trace ?? `tr_${randomBytes(12).toString('hex')}`;
      const refusedNow = (errorClass: string, message: string): RemoteCallOutcome => ({
        key: '',
        trace,
        device: device?.id ?? idOrName,
        result: failure(errorClass, message),
      });
      if (!device) return refusedNow('NotFound', `no paired device "${idOrName}"`);
      if (device.state !== 'active')
        return refusedNow('Revoked', `${device.name} (${device.id}) was revoked`);
      if (!device.executors.includes(name))
        return refusedNow(
          'NotApproved',
          `${name} is not approved for ${device.name}: pair it with --executor ${name}, or run \`metnos devices allow ${device.id} ${name}\``,
        );
      const executor = await settings.executor(name);
      if (!executor) return refusedNow('NotFound', `the server's catalog has no active ${name}`);
      const refusal = remotePolicyRefusal(executor, args);
      if (refusal) return refusedNow('PolicyViolation', refusal);
      const key = newKey();
      const record = {
        key,
        trace,
        device: device.id,
        executor: name,
        version: executor.version,
        args,
        caller: options.caller,
        undoOf: null,
      };
      return dispatch(record, () => ({
        type: 'call',
        key,
        trace,
        executor: name,
        version: executor.version,
        args,
        token: signCallToken(
          {
            device: device.id,
            executor: name,
            digest: executor.digests.code,
            trace,
            key,
            args: argsDigest(args),
          },
          authority.server.privateKey,
          now(),
        ),
      }));
    },
    /** Undoes the file changes of the call of a trace, on its device; refused with the reason when it cannot be. */
    async undo(trace: string, options: { caller: Caller }): Promise<RemoteCallOutcome> {
      const calls = store.callsOfTrace(trace);
      const original = [...calls]
        .reverse()
        .find((call) => call.undoOf === null && call.state === 'done' && (call.after?.length ?? 0) > 0);
      const refusedNow = (errorClass: string, message: string): RemoteCallOutcome => ({
        key: '',
        trace,
        device: original?.device ?? '',
        result: failure(errorClass, message),
      });
      if (!original) return refusedNow('NotFound', `trace ${trace} has no remote call that changed files`);
      if (original.undoneBy)
        return refusedNow(
          'AlreadyUndone',
          `the call of trace ${trace} was undone already (${original.undoneBy})`,
        );
      const device = store.device(original.device);
      if (device?.state !== 'active')
        return refusedNow('Revoked', `the device of trace ${trace} was revoked`);
      const key = newKey();
      const target = original.key;
      return dispatch(
        {
          key,
          trace,
          device: device.id,
          executor: UNDO_EXECUTOR,
          version: null,
          args: { target },
          caller: options.caller,
          undoOf: target,
        },
        () => ({
          type: 'undo',
          key,
          trace,
          target,
          token: signCallToken(
            {
              device: device.id,
              executor: UNDO_EXECUTOR,
              digest: target,
              trace,
              key,
              args: argsDigest({ target }),
            },
            authority.server.privateKey,
            now(),
          ),
        }),
      );
    },
    /** Revokes a device: the store says so, its link is closed now, and its calls under way fail. */
    async revoke(idOrName: string): Promise<Device | undefined> {
      const device = store.find(idOrName);
      if (!device) return undefined;
      store.revoke(device.id);
      const link = links.get(device.id);
      if (link) {
        link.send({ type: 'bye', code: 'revoked', reason: 'this device was revoked' });
        link.socket.end();
      }
      for (const item of [...pending.values()])
        if (item.record.device === device.id)
          await finish(item.record.key, { result: failure('Revoked', `${device.name} was revoked`) });
      return store.device(device.id);
    },
    async close(): Promise<void> {
      for (const item of [...pending.values()])
        await finish(item.record.key, { result: failure('Unreachable', 'the server is stopping') });
      for (const link of links.values()) link.socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type DeviceHub = Awaited<ReturnType<typeof startDeviceHub>>;
