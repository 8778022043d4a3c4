import { spawn } from 'node:child_process';
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from '../__fixtures__/index.ts';
import { ReceiptError } from '../errors.ts';
import { generateSigningKey, type SigningKey } from '../keys.ts';
import { createReceiptChain } from './chain.ts';
import { receiptDigest } from './format.ts';
import { verifyReceiptChain } from './verify.ts';

const temp = useTempDirs('metnos-receipts-');
const DAY = Date.UTC(2026, 4, 2, 10);

/** A chain over a fresh folder, its clock ticking one millisecond per reading from 2 May 2026. */
async function freshChain(key?: SigningKey) {
  const dir = await temp.make('chain-');
  const signing = key ?? (await generateSigningKey());
  let tick = 0;
  const chain = createReceiptChain({ dir, key: signing, now: () => DAY + tick++ });
  return { dir, key: signing, chain, file: join(dir, '2026-05-02.jsonl') };
}

const entry = (index: number) => ({
  kind: 'executor',
  data: { executor: 'fs_read', args: `blake3:${String(index).padStart(64, '0')}`, exit: 'ok' },
});

describe('the receipt chain', () => {
  it('links each receipt to the one before by its signature, in order, with rising HLC stamps', async () => {
    const { dir, key, chain, file } = await freshChain();
    const receipts = [];
    for (let index = 0; index < 4; index++) receipts.push(await chain.append(entry(index)));
    expect(receipts.map((receipt) => receipt.seq)).toEqual([0, 1, 2, 3]);
    expect(receipts[0]!.parent_sig).toBeNull();
    for (let index = 1; index < 4; index++)
      expect(receipts[index]!.parent_sig).toBe(receipts[index - 1]!.sig);
    expect((await readFile(file, 'utf8')).trim().split('\n')).toHaveLength(4);
    const report = await verifyReceiptChain({ dir, keys: [key] });
    expect(report).toMatchObject({ status: 'ok', receipts: 4, first: { seq: 0 }, last: { seq: 3 } });
  });

  it('holds metadata only: a nested value (an argument object) is refused before anything is signed', async () => {
    const { chain, dir } = await freshChain();
    const nested = { kind: 'executor', data: { args: { path: '/home/me/secret.txt' } } };
    await expect(chain.append(nested as never)).rejects.toSatisfy(
      (error) => ReceiptError.isInstance(error) && error.reason === 'bad_receipt',
    );
    const long = { kind: 'executor', data: { note: 'x'.repeat(300) } };
    await expect(chain.append(long)).rejects.toSatisfy(ReceiptError.isInstance);
    expect(await readdir(dir)).not.toContain('2026-05-02.jsonl');
  });

  it('does not fork under parallel appends from one process (the tail mutex)', async () => {
    const { dir, key, chain } = await freshChain();
    const receipts = await Promise.all(Array.from({ length: 40 }, (_, index) => chain.append(entry(index))));
    expect(new Set(receipts.map((receipt) => receipt.seq)).size).toBe(40);
    expect(await verifyReceiptChain({ dir, keys: [key] })).toMatchObject({ status: 'ok', receipts: 40 });
  });

  it('does not fork when two chains in one folder append at once (the lock file, the tail read back)', async () => {
    const { dir, key } = await freshChain();
    const clock = () => Date.now();
    const one = createReceiptChain({ dir, key, now: clock });
    const two = createReceiptChain({ dir, key, now: clock });
    await Promise.all(
      Array.from({ length: 30 }, (_, index) => (index % 2 === 0 ? one : two).append(entry(index))),
    );
    expect(await verifyReceiptChain({ dir, keys: [key] })).toMatchObject({ status: 'ok', receipts: 30 });
  });

  it('does not fork when separate processes append at once', async () => {
    const { dir, key } = await freshChain();
    const keyFile = await keyFileOf(key);
    const writer = (count: number) => runWriter(dir, keyFile, count);
    await Promise.all([writer(25), writer(25), writer(25)]);
    expect(await verifyReceiptChain({ dir, keys: [key] })).toMatchObject({ status: 'ok', receipts: 75 });
  });

  it('reports a torn last line as a torn tail, refuses to chain onto it, and repairs it explicitly', async () => {
    const { dir, key, chain, file } = await freshChain();
    for (let index = 0; index < 3; index++) await chain.append(entry(index));
    // what kill -9 in the middle of a write leaves: half a line, no newline
    const half = (await readFile(file, 'utf8')).split('\n')[2]!.slice(0, 70);
    await appendFile(file, half);
    const torn = await verifyReceiptChain({ dir, keys: [key] });
    expect(torn).toMatchObject({
      status: 'torn_tail',
      receipts: 3,
      tornTail: { file: '2026-05-02.jsonl', line: 4, bytes: 70 },
    });
    // a fresh process (no memory of the tail) and this one both refuse
    const fresh = createReceiptChain({ dir, key });
    for (const writer of [chain, fresh]) {
      await expect(writer.append(entry(9))).rejects.toSatisfy(
        (error) => ReceiptError.isInstance(error) && error.reason === 'torn_tail',
      );
      await expect(writer.check()).rejects.toSatisfy(ReceiptError.isInstance);
    }
    const repaired = await fresh.repair();
    expect(repaired.repairs).toHaveLength(1);
    expect(repaired.repairs[0]!.data).toMatchObject({ reason: 'torn_tail', removed_bytes: 70 });
    expect(await readFile(join(dir, repaired.keptAs[0]!), 'utf8')).toBe(half);
    await chain.append(entry(4));
    const after = await verifyReceiptChain({ dir, keys: [key] });
    expect(after).toMatchObject({ status: 'ok', receipts: 5, repairs: [{ seq: 3, reason: 'torn_tail' }] });
  });

  it('survives kill -9 of a writing process: the chain verifies or has a torn tail, never anything else', async () => {
    const { dir, key } = await freshChain();
    const child = startWriter(dir, await keyFileOf(key), 100_000);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await new Promise((resolve) => setTimeout(resolve, 700));
    child.kill('SIGKILL');
    await exited;
    const report = await verifyReceiptChain({ dir, keys: [key] });
    expect(['ok', 'torn_tail']).toContain(report.status);
    expect(report.receipts).toBeGreaterThan(0);
    // the lock it held is stale: a new writer takes it over, after a repair if the line was torn
    const chain = createReceiptChain({ dir, key, lockTimeoutMs: 5000 });
    await chain.repair();
    await chain.append(entry(1));
    expect((await verifyReceiptChain({ dir, keys: [key] })).status).toBe('ok');
  });

  it('refuses to append after receipts were cut off its end, until a repair records the gap', async () => {
    const { dir, key, chain, file } = await freshChain();
    for (let index = 0; index < 4; index++) await chain.append(entry(index));
    const lines = (await readFile(file, 'utf8')).split('\n');
    await writeFile(file, `${lines.slice(0, 2).join('\n')}\n`);
    const fresh = createReceiptChain({ dir, key });
    await expect(fresh.append(entry(5))).rejects.toSatisfy(
      (error) => ReceiptError.isInstance(error) && error.reason === 'truncated',
    );
    const { repairs } = await fresh.repair();
    expect(repairs[0]!.data).toMatchObject({ reason: 'truncated', head_seq: 3, found_seq: 1 });
    expect(await verifyReceiptChain({ dir, keys: [key] })).toMatchObject({
      status: 'ok',
      repairs: [{ seq: 2, reason: 'truncated' }],
    });
  });

  it('keeps digests, not values: the digest of the same arguments is the same whatever their key order', async () => {
    expect(await receiptDigest({ a: 1, b: [2, { c: 3, d: 4 }] })).toBe(
      await receiptDigest({ b: [2, { d: 4, c: 3 }], a: 1 }),
    );
  });
});

/** The key as a file a child process reads (a test key, in a temp folder removed after the tests). */
async function keyFileOf(key: SigningKey): Promise<string> {
  const path = join(await temp.make('key-'), 'key.json');
  const raw = { keyId: key.keyId, secretKey: [...key.secretKey], publicKey: [...key.publicKey] };
  await writeFile(path, JSON.stringify(raw), { mode: 0o600 });
  return path;
}

const WRITER = `
const [dir, keyFile, count] = process.argv.slice(1);
const { readFileSync } = await import('node:fs');
const { createReceiptChain } = await import(${JSON.stringify(new URL('./chain.ts', import.meta.url).href)});
const raw = JSON.parse(readFileSync(keyFile, 'utf8'));
const key = { keyId: raw.keyId, publicKey: Uint8Array.from(raw.publicKey), secretKey: Uint8Array.from(raw.secretKey) };
const chain = createReceiptChain({ dir, key, lockTimeoutMs: 20000 });
for (let index = 0; index < Number(count); index++) {
  await chain.append({ kind: 'executor', data: { executor: 'child', index, pid: process.pid } });
}
`;

function startWriter(dir: string, keyFile: string, count: number) {
  return spawn(process.execPath, ['--input-type=module', '--eval', WRITER, dir, keyFile, String(count)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

function runWriter(dir: string, keyFile: string, count: number): Promise<void> {
  const child = startWriter(dir, keyFile, count);
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) =>
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`writer exited ${code}: ${stderr}`)),
    ),
  );
}
