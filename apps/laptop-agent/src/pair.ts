import { generateKeyPairSync, sign, X509Certificate } from 'node:crypto';
import { connect, type TLSSocket } from 'node:tls';
import { parseServerAddress } from './address.ts';
import { saveIdentity } from './identity.ts';
import type { LaptopPlaces } from './places.ts';
import { RemoteError } from './protocol/errors.ts';
import { createFrameReader, encodeFrame, type ServerFrame, serverFrameSchema } from './protocol/frames.ts';
import { TLS_VERSION } from './protocol/index.ts';
import {
  devicePairingProof,
  pairingLookup,
  pairingSecret,
  possessionStatement,
  proofMatches,
  serverPairingProof,
} from './protocol/pairing.ts';

/** Settings of {@link pairDevice}. */
export interface PairSettings {
  places: LaptopPlaces;
  /** The server's device channel as `metnos devices pair` printed it. */
  server: string;
  code: string;
  /** How the server lists this laptop (default: the host name). */
  name: string;
  /** How long to wait for the server (default 15 s). */
  timeoutMs?: number;
}

/** Reads the next frame of a pairing exchange. */
function nextFrames(socket: TLSSocket) {
  const queue: ServerFrame[] = [];
  const waiting: Array<{ resolve: (frame: ServerFrame) => void; reject: (error: Error) => void }> = [];
  let failure: Error | undefined;
  const fail = (error: Error) => {
    failure ??= error;
    for (const waiter of waiting.splice(0)) waiter.reject(failure);
  };
  socket.on(
    'data',
    createFrameReader(
      serverFrameSchema,
      (frame) => {
        const waiter = waiting.shift();
        if (waiter) waiter.resolve(frame);
        else queue.push(frame);
      },
      fail,
    ),
  );
  socket.on('error', (error) =>
    fail(new RemoteError({ code: 'unreachable', message: `the server: ${error.message}`, cause: error })),
  );
  socket.on('close', () =>
    fail(new RemoteError({ code: 'unreachable', message: 'the server closed the connection' })),
  );
  return (): Promise<ServerFrame> => {
    const frame = queue.shift();
    if (frame) return Promise.resolve(frame);
    if (failure) return Promise.reject(failure);
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  };
}

/**
 * Pairs this laptop with a server from a one-time code. The TLS link is not
 * trusted at first (the laptop knows no CA yet): the server proves it knows
 * the code with an HMAC over its CA certificate, and that CA must have issued
 * the certificate the link presented; the laptop then makes its key pair
 * here (ECDSA P-256; the private key never leaves this machine), proves it
 * holds it by signing the challenge, proves it knows the code, and gets back
 * a device certificate issued by that CA. Everything is saved in the config
 * dir's `device/` folder.
 *
 * @example
 * const device = await pairDevice({ places: laptopPlaces({}), server: 'tls://192.168.1.5:8788', code: 'K7PX-2M9Q-HT4W-ZC8N', name: 'ada-laptop' });
 */
export async function pairDevice(
  settings: PairSettings,
): Promise<{ device: string; name: string; server: string }> {
  const address = parseServerAddress(settings.server);
  const secret = pairingSecret(settings.code);
  const lookup = pairingLookup(secret);
  const socket = connect({
    host: address.host,
    port: address.port,
    minVersion: TLS_VERSION,
    maxVersion: TLS_VERSION,
    // no CA is known yet: the server's certificate is checked against the CA the code authenticates, below
    rejectUnauthorized: false,
  });
  const timer = setTimeout(
    () =>
      socket.destroy(new RemoteError({ code: 'unreachable', message: 'the server did not answer in time' })),
    settings.timeoutMs ?? 15_000,
  );
  try {
    const next = nextFrames(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', resolve);
      socket.once('error', reject);
    }).catch((error: Error) => {
      throw new RemoteError({
        code: 'unreachable',
        message: `cannot reach ${address.text}: ${error.message}`,
        cause: error,
      });
    });
    socket.write(encodeFrame({ type: 'pair-hello', lookup }));
    const challenge = await next();
    if (challenge.type === 'pair-refused')
      throw new RemoteError({ code: 'pairing_refused', message: challenge.reason });
    if (challenge.type !== 'pair-challenge')
      throw new RemoteError({ code: 'bad_frame', message: 'the server did not send a challenge' });
    const ca = new X509Certificate(challenge.ca);
    const presented = socket.getPeerX509Certificate();
    if (
      !proofMatches(challenge.proof, serverPairingProof(secret, challenge.nonce, ca.raw)) ||
      !ca.ca ||
      !presented?.checkIssued(ca) ||
      !presented.verify(ca.publicKey)
    )
      throw new RemoteError({
        code: 'pairing_refused',
        message:
          'the server could not prove it issued this code (a wrong code, or someone between this laptop and the server)',
      });
    const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const spki = keys.publicKey.export({ type: 'spki', format: 'der' });
    socket.write(
      encodeFrame({
        type: 'pair-request',
        lookup,
        nonce: challenge.nonce,
        name: settings.name,
        publicKey: spki.toString('base64'),
        signature: sign(
          'sha256',
          possessionStatement(challenge.nonce, spki, settings.name),
          keys.privateKey,
        ).toString('base64'),
        proof: devicePairingProof(secret, challenge.nonce, spki),
      }),
    );
    const done = await next();
    if (done.type === 'pair-refused')
      throw new RemoteError({ code: 'pairing_refused', message: done.reason });
    if (done.type !== 'pair-done')
      throw new RemoteError({ code: 'bad_frame', message: 'the server did not finish pairing' });
    const certificate = new X509Certificate(done.certificate);
    if (!certificate.verify(ca.publicKey) || !certificate.publicKey.equals(keys.publicKey))
      throw new RemoteError({
        code: 'pairing_refused',
        message: 'the certificate the server sent is not for this key, or not from its CA',
      });
    await saveIdentity(settings.places, {
      v: 1,
      device: done.device,
      name: done.name,
      server: address.text,
      trustedKeys: done.trustedKeys,
      pairedAt: new Date().toISOString(),
      key: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      certificate: done.certificate,
      ca: challenge.ca,
    });
    return { device: done.device, name: done.name, server: address.text };
  } finally {
    clearTimeout(timer);
    socket.destroy();
  }
}
