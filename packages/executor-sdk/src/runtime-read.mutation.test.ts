import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { describe, expect, it } from 'vitest';
import { entryFileOf, readArtefactView, readInto } from '../runtime/read-artefact.mjs';
import { loadSodiumVerify, sodiumAccepts } from '../runtime/sodium-verify.mjs';
import { useTempDirs } from './__fixtures__/index.ts';
import { generateSigningKey } from './keys.ts';

const temp = useTempDirs('metnos-runtime-read-');

describe('reading an artefact into a given buffer', () => {
  it('refuses when no buffer is given for the size, saying so', async () => {
    const file = join(await temp.make('dir-'), 'a');
    await writeFile(file, 'abc');
    expect(() => readInto(file, () => undefined)).toThrow('no room for the file');
    // a larger buffer: the bytes are the file's, no more
    expect(readInto(file, () => Buffer.alloc(10)).bytes.toString()).toBe('abc');
  });

  it('reads text artefacts of up to 64 KiB through one reused buffer, and larger ones into their own', async () => {
    const dir = await temp.make('dir-');
    const [small, edge, large] = [1, 64 * 1024, 64 * 1024 + 1].map((size) => join(dir, String(size)));
    await writeFile(small!, 'x');
    await writeFile(edge!, Buffer.alloc(64 * 1024, 'y'));
    await writeFile(large!, Buffer.alloc(64 * 1024 + 1, 'z'));
    const first = readArtefactView(small!).bytes;
    expect(first.toString()).toBe('x');
    const second = readArtefactView(edge!).bytes;
    expect(second.buffer).toBe(first.buffer);
    expect(second.length).toBe(64 * 1024);
    const third = readArtefactView(large!).bytes;
    expect(third.buffer).not.toBe(first.buffer);
    expect(third.length).toBe(64 * 1024 + 1);
  });
});

describe('the code file a manifest names, as the reading threads find it', () => {
  it.each([
    ['entry = "run.ts"', 'run.ts'],
    ['entry="run.mjs"', 'run.mjs'],
    [' \tentry \t= \t"run.js" \t', 'run.js'],
    ['[executor]\nname = "x"\nentry = "tool.ts"\n[contract]', 'tool.ts'],
    ['name = "x"', 'main.ts'],
    ['', 'main.ts'],
    ['#entry = "evil.ts"', 'main.ts'],
    ['entryx = "evil.ts"', 'main.ts'],
    ['entry = x"evil.ts"', 'main.ts'],
    ['entry = "evil.ts"x', 'main.ts'],
    ['entry = "evil.ts" # a comment', 'main.ts'],
    ['entry = "../evil.ts"', 'main.ts'],
    ['entry = "evil.json"', 'main.ts'],
  ])('%j names %s', (text, name) => {
    expect(entryFileOf(text)).toBe(name);
  });
});

describe("libsodium's check", () => {
  it('is asked only for an exact 64-byte signature and a 32-byte key', async () => {
    const verify = loadSodiumVerify();
    expect(verify).toBeTypeOf('function');
    const key = await generateSigningKey();
    const message = new TextEncoder().encode('Metnos');
    const signature = ed25519.sign(message, key.secretKey);
    expect(sodiumAccepts(verify, signature, message, key.publicKey)).toBe(true);
    const longer = new Uint8Array(65);
    longer.set(signature);
    expect(sodiumAccepts(verify, longer, message, key.publicKey)).toBe(false);
    const longerKey = new Uint8Array(33);
    longerKey.set(key.publicKey);
    expect(sodiumAccepts(verify, signature, message, longerKey)).toBe(false);
    expect(sodiumAccepts(undefined, signature, message, key.publicKey)).toBe(false);
  });
});
