import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from '../__fixtures__/index.ts';
import { ReceiptError } from '../errors.ts';
import { generateSigningKey } from '../keys.ts';
import { createReceiptChain } from './chain.ts';
import { HEAD_FILE, writeHead } from './files.ts';
import type { Receipt } from './format.ts';

// A chain keeps the head it wrote in memory and reads the file again only when
// the file is not the one it wrote. A head changed under a live chain, by any
// route, must still stop it.

const temp = useTempDirs('metnos-receipt-head-');
const entry = (index: number) => ({ kind: 'executor', data: { executor: 'fs_read', index } });

async function chainWithReceipts(count: number) {
  const dir = await temp.make('chain-');
  const key = await generateSigningKey();
  const chain = createReceiptChain({ dir, key });
  const receipts: Receipt[] = [];
  for (let index = 0; index < count; index++) receipts.push(await chain.append(entry(index)));
  return { dir, key, chain, receipts };
}

const refusedAs = (reason: string) => (error: unknown) =>
  ReceiptError.isInstance(error) && error.reason === reason;

describe('the head a live chain remembers', () => {
  it('is read again when another head, validly signed and ahead of the files, replaces it', async () => {
    const { dir, key, chain, receipts } = await chainWithReceipts(3);
    const last = receipts.at(-1)!;
    await writeHead(dir, { ...last, seq: last.seq + 5 }, key);
    await expect(chain.check()).rejects.toSatisfy(refusedAs('truncated'));
    await expect(chain.append(entry(9))).rejects.toSatisfy(refusedAs('truncated'));
  });

  it('is read again when the head file is edited in place, byte for byte the same length', async () => {
    const { dir, chain } = await chainWithReceipts(2);
    const path = join(dir, HEAD_FILE);
    const text = await readFile(path, 'utf8');
    const flipped = text.replace(
      /"head_sig":"(.)/,
      (_, first: string) => `"head_sig":"${first === 'A' ? 'B' : 'A'}`,
    );
    expect(flipped.length).toBe(text.length);
    await writeFile(path, flipped);
    await expect(chain.append(entry(5))).rejects.toSatisfy(refusedAs('bad_receipt'));
  });

  it('is the file it wrote otherwise: appends go on', async () => {
    const { chain } = await chainWithReceipts(3);
    await chain.check();
    expect((await chain.append(entry(3))).seq).toBe(3);
  });
});
