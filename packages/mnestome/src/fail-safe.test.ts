import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { createMnestome } from './mnestome.ts';
import { damageOpenStore } from './test/index.ts';

const folder = mkdtempSync(join(tmpdir(), 'metnos-mnestome-failsafe-'));

describe('writes that fail', () => {
  it('are reported and swallowed when the store is read-only', () => {
    const file = join(folder, 'read-only.sqlite');
    const client = new Database(file);
    const failures: Array<[string, string]> = [];
    const mnestome = createMnestome({
      db: client,
      onError: (error, operation) => failures.push([operation, (error as Error).message]),
    });
    client.pragma('query_only = ON');
    expect(() => mnestome.recordPassing('fs_read', 'text_stats', true)).not.toThrow();
    expect(() => mnestome.recordUse('fs_read')).not.toThrow();
    expect(failures).toEqual([
      ['record a passage', expect.stringMatching(/readonly|read-only|query_only/i)],
      ['record a use', expect.stringMatching(/readonly|read-only|query_only/i)],
    ]);
    client.close();
  });

  it('are reported and swallowed when the file is damaged under an open store; reads give nothing', () => {
    const file = join(folder, 'damaged.sqlite');
    const failures: string[] = [];
    const mnestome = createMnestome({ path: file, onError: (_error, operation) => failures.push(operation) });
    mnestome.recordPassing('fs_read', 'text_stats', true);
    damageOpenStore(file);
    expect(() => mnestome.recordPassing('fs_read', 'fs_write', true)).not.toThrow();
    expect(mnestome.passagesFrom('fs_read')).toEqual([]);
    expect(failures).toEqual(['record a passage', 'read passages']);
  });

  it('say so on stderr in one line by default, without a stack', () => {
    const file = join(folder, 'damaged-default.sqlite');
    const mnestome = createMnestome({ path: file });
    mnestome.recordUse('fs_read');
    damageOpenStore(file);
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    try {
      mnestome.recordUse('fs_read');
    } finally {
      spy.mockRestore();
    }
    expect(written).toEqual(['metnos: the mnestome could not record a use: file is not a database\n']);
  });
});
