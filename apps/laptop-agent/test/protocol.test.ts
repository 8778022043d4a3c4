import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  argsDigest,
  createFrameReader,
  encodeFrame,
  newPairingCode,
  normalizePairingCode,
  RemoteError,
  serverFrameSchema,
  signCallToken,
  verifyCallToken,
} from '../src/protocol/index.ts';

const server = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const claims = {
  device: 'dev_0123456789abcdef',
  executor: 'photo_organize',
  digest: `blake3:${'a'.repeat(64)}`,
  trace: 'tr_1',
  key: 'key_0123456789',
  args: argsDigest({ folder: '.' }),
};

const codeOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return RemoteError.isInstance(error) ? error.code : 'not a RemoteError';
  }
  return 'accepted';
};

describe('call tokens', () => {
  it('bind device, executor digest, trace, key and arguments, signed by the server key', () => {
    const token = signCallToken(claims, server.privateKey, 1_000_000);
    expect(verifyCallToken(token, server.publicKey, 1_000_000)).toMatchObject(claims);
    expect(codeOf(() => verifyCallToken(token, other.publicKey, 1_000_000))).toBe('bad_token');
    const [payload, signature] = token.split('.') as [string, string];
    const forged = Buffer.from(
      Buffer.from(payload, 'base64url').toString().replace('photo_organize', 'photo_organizz'),
    ).toString('base64url');
    expect(codeOf(() => verifyCallToken(`${forged}.${signature}`, server.publicKey, 1_000_000))).toBe(
      'bad_token',
    );
  });

  it('expire, and never claim a lifetime longer than five minutes', () => {
    const token = signCallToken(claims, server.privateKey, 1_000_000);
    expect(codeOf(() => verifyCallToken(token, server.publicKey, 1_000_000 + 5 * 60_000 + 61_000))).toBe(
      'expired',
    );
    const long = signCallToken({ ...claims, expiresAt: 1_000_000 + 3_600_000 }, server.privateKey, 1_000_000);
    expect(codeOf(() => verifyCallToken(long, server.publicKey, 1_000_000))).toBe('bad_token');
  });

  it('digest arguments by their canonical JSON', () => {
    expect(argsDigest({ b: 1, a: [1, { d: 2, c: 3 }] })).toBe(argsDigest({ a: [1, { c: 3, d: 2 }], b: 1 }));
    expect(argsDigest({ folder: '.' })).not.toBe(argsDigest({ folder: './' }));
  });
});

describe('frames', () => {
  it('are read line by line across chunks, and a bad one stops the reader', () => {
    const frames: unknown[] = [];
    const bad: string[] = [];
    const read = createFrameReader(
      serverFrameSchema,
      (frame) => frames.push(frame),
      (error) => bad.push(error.code),
    );
    const text =
      encodeFrame({ type: 'before-ack', key: 'key_0123456789' }) +
      encodeFrame({ type: 'welcome', device: 'd', name: 'n' });
    read(Buffer.from(text.slice(0, 10)));
    read(Buffer.from(text.slice(10)));
    expect(frames).toEqual([
      { type: 'before-ack', key: 'key_0123456789' },
      { type: 'welcome', device: 'd', name: 'n' },
    ]);
    read(Buffer.from('{"type":"call","key":"x"}\n'));
    read(Buffer.from(encodeFrame({ type: 'before-ack', key: 'key_0123456789' })));
    expect(bad).toEqual(['bad_frame']);
    expect(frames).toHaveLength(2);
  });
});

describe('pairing codes', () => {
  it('have one spelling, whatever the case and separators typed', () => {
    const code = newPairingCode();
    expect(code).toMatch(/^([A-Z2-9]{4}-){3}[A-Z2-9]{4}$/);
    expect(normalizePairingCode(code.toLowerCase().replaceAll('-', ' '))).toBe(code.replaceAll('-', ''));
    expect(codeOf(() => normalizePairingCode('ABCD-EFGH-0000-1111'))).toBe('pairing_refused');
  });
});
