import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { useTempDirs } from '../__fixtures__/index.ts';
import { generateSigningKey, type SigningKey } from '../keys.ts';
import { createReceiptChain } from './chain.ts';
import { type Receipt, receiptLine, signReceipt } from './format.ts';
import { verifyReceiptChain } from './verify.ts';

const temp = useTempDirs('metnos-receipts-verify-');
const DAY = Date.UTC(2026, 4, 2, 23, 59, 59, 990);
const FILE = '2026-05-02.jsonl';

let dir: string;
let key: SigningKey;

/** Six receipts: four on 2 May, the last two after midnight on 3 May. */
beforeEach(async () => {
  dir = await temp.make('chain-');
  key = await generateSigningKey();
  let tick = 0;
  const chain = createReceiptChain({ dir, key, now: () => DAY + 3 * tick++ });
  for (let index = 0; index < 6; index++)
    await chain.append({
      kind: 'model',
      data: { model: 'qwen3:8b', request: `blake3:${index}`, tokens: index },
    });
});

const lines = async (file = FILE) => (await readFile(join(dir, file), 'utf8')).split('\n').slice(0, -1);
const rewrite = (changed: string[], file = FILE) => writeFile(join(dir, file), `${changed.join('\n')}\n`);
const verify = (from?: string) => verifyReceiptChain({ dir, keys: [key], ...(from ? { from } : {}) });

describe('verifying the receipt chain', () => {
  it('passes a whole chain across day files', async () => {
    expect(await lines()).toHaveLength(4);
    expect(await lines('2026-05-03.jsonl')).toHaveLength(2);
    expect(await verify()).toMatchObject({
      status: 'ok',
      receipts: 6,
      files: 2,
      anchored: false,
      repairs: [],
    });
  });

  it('names a deleted line: the receipt after it says which one is missing', async () => {
    const original = await lines();
    await rewrite([original[0]!, original[2]!, original[3]!]);
    expect((await verify()).broken).toMatchObject({ reason: 'missing', file: FILE, line: 2, seq: 2 });
  });

  it('names the first line when it is deleted: the chain no longer starts at receipt 0', async () => {
    await rewrite((await lines()).slice(1));
    expect((await verify()).broken).toMatchObject({ reason: 'missing_start', line: 1, seq: 1 });
  });

  it('detects one edited byte in a value, in the signature, and in the spelling alone', async () => {
    const original = await lines();
    const edits = [
      original[1]!.replace('"tokens":1', '"tokens":7'),
      original[1]!.replace(/"sig":"(.)/, (_, first: string) => `"sig":"${first === 'A' ? 'B' : 'A'}`),
      original[1]!.replace('"seq":1,', '"seq":1 ,'),
    ];
    const reasons = [];
    for (const edited of edits) {
      await rewrite([original[0]!, edited, ...original.slice(2)]);
      reasons.push((await verify()).broken);
    }
    expect(reasons).toMatchObject([
      { reason: 'bad_signature', line: 2, seq: 1 },
      { reason: 'bad_signature', line: 2, seq: 1 },
      { reason: 'not_canonical', line: 2 },
    ]);
  });

  it('detects two lines swapped', async () => {
    const original = await lines();
    await rewrite([original[0]!, original[2]!, original[1]!, original[3]!]);
    expect((await verify()).broken).toMatchObject({ reason: 'reordered', line: 2, seq: 2 });
  });

  it('detects a line cut short inside the chain, and a last line cut short as a torn tail', async () => {
    const original = await lines();
    await rewrite([original[0]!, original[1]!.slice(0, 40), ...original.slice(2)]);
    expect((await verify()).broken).toMatchObject({ reason: 'unreadable', line: 2 });
    await rewrite(original);
    const last = await lines('2026-05-03.jsonl');
    await writeFile(join(dir, '2026-05-03.jsonl'), `${last[0]}\n${last[1]!.slice(0, 50)}`);
    expect(await verify()).toMatchObject({
      status: 'torn_tail',
      receipts: 5,
      tornTail: { file: '2026-05-03.jsonl', line: 2, bytes: 50 },
    });
  });

  it('detects receipts cut off the end through the signed head', async () => {
    const last = await lines('2026-05-03.jsonl');
    await rewrite([last[0]!], '2026-05-03.jsonl');
    expect((await verify()).broken).toMatchObject({ reason: 'truncated', file: 'head.json' });
    await rename(join(dir, '2026-05-03.jsonl'), join(dir, 'gone'));
    expect((await verify()).broken).toMatchObject({ reason: 'truncated' });
  });

  it('refuses a forged signature: a changed receipt signed again with another key', async () => {
    const original = await lines();
    const forger = await generateSigningKey();
    const receipt = JSON.parse(original[2]!) as Receipt;
    const { sig: _sig, key_id: _id, ...unsigned } = receipt;
    const forged = signReceipt({ ...unsigned, data: { ...receipt.data, tokens: 0 } }, forger);
    // under its own key id: a key nobody gave; under ours: a signature that does not verify
    await rewrite([...original.slice(0, 2), receiptLine(forged), original[3]!]);
    expect((await verify()).broken).toMatchObject({ reason: 'unknown_key', line: 3, seq: 2 });
    await rewrite([...original.slice(0, 2), receiptLine({ ...forged, key_id: key.keyId }), original[3]!]);
    expect((await verify()).broken).toMatchObject({ reason: 'bad_signature', line: 3, seq: 2 });
  });

  it('detects a receipt spliced in from another chain signed with the same key (the parent link)', async () => {
    const other = await temp.make('other-');
    let tick = 0;
    const chain = createReceiptChain({ dir: other, key, now: () => DAY + 3 * tick++ });
    for (let index = 0; index < 3; index++)
      await chain.append({
        kind: 'model',
        data: { model: 'other', request: `blake3:${index}`, tokens: index },
      });
    const spliced = (await readFile(join(other, FILE), 'utf8')).split('\n')[2]!;
    const original = await lines();
    await rewrite([original[0]!, original[1]!, spliced, original[3]!]);
    expect((await verify()).broken).toMatchObject({ reason: 'broken_link', line: 3, seq: 2 });
  });

  it('detects an HLC stamp that goes back, even on a receipt signed with the right key', async () => {
    const original = await lines();
    const receipt = JSON.parse(original[3]!) as Receipt;
    const { sig: _sig, key_id: _id, ...unsigned } = receipt;
    const earlier = signReceipt({ ...unsigned, hlc: { ms: DAY - 1000, c: 0 } }, key);
    await rewrite([...original.slice(0, 3), receiptLine(earlier)]);
    expect((await verify()).broken).toMatchObject({ reason: 'hlc_not_monotonic', line: 4, seq: 3 });
  });

  it('detects a receipt moved to another day file', async () => {
    const original = await lines();
    const next = await lines('2026-05-03.jsonl');
    await rewrite(original.slice(0, 3));
    await rewrite([original[3]!, ...next], '2026-05-03.jsonl');
    expect((await verify()).broken).toMatchObject({ reason: 'wrong_day', file: '2026-05-03.jsonl', line: 1 });
  });

  it('starts at a day with --from, anchored on its first receipt', async () => {
    await rewrite(['garbage that is not a receipt']);
    expect(await verify('2026-05-03')).toMatchObject({
      status: 'ok',
      receipts: 2,
      anchored: true,
      first: { seq: 4 },
    });
  });
});
