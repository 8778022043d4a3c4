import { chmodSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bearerMatches, ServerTokenError, serverToken } from '../src/token.ts';

describe('the server token', () => {
  it('is created once, 0600, and read back the same', () => {
    const dir = mkdtempSync(join(tmpdir(), 'metnos-token-'));
    const token = serverToken(dir, { create: true });
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(serverToken(dir, { create: true })).toBe(token);
    expect(serverToken(dir)).toBe(token);
  });

  it('refuses a missing file, a link, a file others can read, and garbage', () => {
    const dir = mkdtempSync(join(tmpdir(), 'metnos-token-'));
    expect(() => serverToken(dir)).toThrow(/metnos init/);
    const elsewhere = join(dir, 'elsewhere');
    writeFileSync(elsewhere, `${'a'.repeat(43)}\n`, { mode: 0o600 });
    symlinkSync(elsewhere, join(dir, 'server.token'));
    expect(() => serverToken(dir)).toThrow(/symbolic link/);
    expect(() => serverToken(dir, { create: true })).toThrow(ServerTokenError);
    const open = mkdtempSync(join(tmpdir(), 'metnos-token-'));
    writeFileSync(join(open, 'server.token'), `${'a'.repeat(43)}\n`);
    chmodSync(join(open, 'server.token'), 0o644);
    expect(() => serverToken(open)).toThrow(/readable by others/);
    chmodSync(join(open, 'server.token'), 0o600);
    expect(serverToken(open)).toBe('a'.repeat(43));
    writeFileSync(join(open, 'server.token'), 'short');
    expect(() => serverToken(open)).toThrow(/does not hold a server token/);
  });

  it('matches a bearer header only with the exact token', () => {
    const token = 'b'.repeat(43);
    expect(bearerMatches(`Bearer ${token}`, token)).toBe(true);
    expect(bearerMatches(`Bearer ${'c'.repeat(43)}`, token)).toBe(false);
    expect(bearerMatches(`bearer ${token}`, token)).toBe(false);
    expect(bearerMatches(token, token)).toBe(false);
    expect(bearerMatches(undefined, token)).toBe(false);
    expect(bearerMatches(`Bearer ${token}x`, token)).toBe(false);
  });
});
