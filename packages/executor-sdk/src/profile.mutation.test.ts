import { describe, expect, it } from 'vitest';
import { blake3Digest } from './hash.ts';
import {
  canonicalProfile,
  DEFAULT_MAX_WRITE_BYTES,
  type DeclaredProfile,
  declaredProfileSchema,
  ISOLATION_TIERS,
  profileHash,
  profileHashSync,
  tierRank,
} from './profile.ts';

const minimal = { profile: 'p', max_duration_ms: 1000, max_memory_mb: 64, max_output_bytes: 1024 };
const parse = (extra: Record<string, unknown>) => declaredProfileSchema.safeParse({ ...minimal, ...extra });

describe('isolation tiers', () => {
  it('rank none < basic < standard < full', () => {
    expect(ISOLATION_TIERS).toEqual(['none', 'basic', 'standard', 'full']);
    expect(ISOLATION_TIERS.map(tierRank)).toEqual([0, 1, 2, 3]);
  });
});

describe('the declared profile', () => {
  it('fills the defaults: full tier, no files, no programs, no network', () => {
    expect(declaredProfileSchema.parse(minimal)).toEqual({
      ...minimal,
      min_tier: 'full',
      fs: { read: [], write: [] },
      exec: { mode: 'none', binaries: [] },
      network: { mode: 'none', domains: [] },
    });
    expect(DEFAULT_MAX_WRITE_BYTES).toBe(32 * 1024 * 1024);
  });

  it('takes absolute paths and the three place variables only', () => {
    for (const path of [
      '/srv/data',
      '$WORKSPACE',
      '$WORKSPACE/notes',
      '$HOME',
      '$HOME/x',
      '$TMP',
      '$TMP/y',
    ]) {
      expect(parse({ fs: { read: [path] } }).success).toBe(true);
    }
    for (const path of ['', 'relative', '$WORKSPACES', '$HOMEx', '$OTHER/x', '~/x', 'x/$HOME']) {
      expect(parse({ fs: { read: [path] } }).success).toBe(false);
      expect(parse({ fs: { write: [path] } }).success).toBe(false);
    }
  });

  it('takes lowercase domains, wildcards, ports and credential handles only', () => {
    for (const domain of [
      'api.example.com',
      '*.example.com',
      'api.example.com:8443',
      'a-b.example.co.uk',
      'x.example.com',
      'api.x.com',
      '$CREDENTIAL:mail',
      '$CREDENTIAL:my_mail',
    ]) {
      expect(parse({ network: { mode: 'allowlist', domains: [domain] } }).success).toBe(true);
    }
    for (const domain of [
      'API.example.com',
      'localhost',
      '-a.example.com',
      'a-.example.com',
      'api.example.com:123456',
      'api.example.com:',
      '*example.com',
      'http://api.example.com',
      '$CREDENTIAL:Mail',
      '$CREDENTIAL:1mail',
      `$CREDENTIAL:${'a'.repeat(33)}`,
      '$CREDENTIAL:',
      ' api.example.com',
    ]) {
      expect(parse({ network: { mode: 'allowlist', domains: [domain] } }).success).toBe(false);
    }
  });

  it('fills the defaults inside a section given empty', () => {
    expect(declaredProfileSchema.parse({ ...minimal, fs: {}, exec: {}, network: {} })).toMatchObject({
      fs: { read: [], write: [] },
      exec: { mode: 'none', binaries: [] },
      network: { mode: 'none', domains: [] },
    });
    expect(declaredProfileSchema.parse({ ...minimal, fs: { read: ['/a'] } }).fs).toEqual({
      read: ['/a'],
      write: [],
    });
    expect(declaredProfileSchema.parse({ ...minimal, fs: { write: ['/a'] } }).fs).toEqual({
      read: [],
      write: ['/a'],
    });
  });

  it('says what it expected of a refused entry', () => {
    const messages = (extra: Record<string, unknown>) =>
      parse(extra).error?.issues.map((issue) => issue.message);
    expect(messages({ profile: '' })).toEqual(['a profile name']);
    expect(messages({ fs: { read: ['relative'] } })).toEqual([
      'an absolute path or one starting with $WORKSPACE, $HOME or $TMP',
    ]);
    expect(messages({ exec: { mode: 'allowlist', binaries: ['/usr/bin/git'] } })).toEqual([
      'a bare binary name',
    ]);
    expect(messages({ network: { mode: 'allowlist', domains: ['API.example.com'] } })).toEqual([
      'a lowercase domain name such as "api.example.com", optionally "*.example.com" or with ":port", or "$CREDENTIAL:<handle>"',
    ]);
  });

  it('bounds every limit and refuses unknown keys and modes', () => {
    expect(parse({ max_duration_ms: 600_000 }).success).toBe(true);
    expect(parse({ max_duration_ms: 600_001 }).success).toBe(false);
    expect(parse({ max_duration_ms: 0 }).success).toBe(false);
    expect(parse({ max_duration_ms: 1.5 }).success).toBe(false);
    expect(parse({ max_memory_mb: 65_536 }).success).toBe(true);
    expect(parse({ max_memory_mb: 65_537 }).success).toBe(false);
    expect(parse({ max_output_bytes: 256 * 1024 * 1024 }).success).toBe(true);
    expect(parse({ max_output_bytes: 256 * 1024 * 1024 + 1 }).success).toBe(false);
    expect(parse({ max_write_bytes: 64 * 1024 * 1024 * 1024 }).success).toBe(true);
    expect(parse({ max_write_bytes: 64 * 1024 * 1024 * 1024 + 1 }).success).toBe(false);
    expect(parse({ max_write_bytes: 0 }).success).toBe(false);
    expect(parse({ profile: '' }).success).toBe(false);
    expect(parse({ min_tier: 'strong' }).success).toBe(false);
    expect(parse({ extra: 1 }).success).toBe(false);
    expect(parse({ fs: { read: [], other: [] } }).success).toBe(false);
    expect(parse({ fs: { hardlinks: true } }).success).toBe(true);
    expect(parse({ exec: { mode: 'all' } }).success).toBe(false);
    expect(parse({ exec: { mode: 'allowlist', binaries: ['git', 'python3.12', 'g++'] } }).success).toBe(true);
    expect(parse({ exec: { mode: 'allowlist', binaries: ['/usr/bin/git'] } }).success).toBe(false);
    expect(parse({ exec: { mode: 'allowlist', binaries: ['git push'] } }).success).toBe(false);
    expect(parse({ exec: { extra: 1 } }).success).toBe(false);
    expect(parse({ network: { mode: 'open' } }).success).toBe(false);
    expect(parse({ network: { extra: 1 } }).success).toBe(false);
  });
});

describe('the profile lock', () => {
  const profile = (extra: Partial<DeclaredProfile> = {}): DeclaredProfile => ({
    ...declaredProfileSchema.parse(minimal),
    ...extra,
  });

  it('is canonical: keys sorted, lists sorted and de-duplicated, later fields only when set', () => {
    expect(
      canonicalProfile(
        profile({
          fs: { read: ['/b', '/a', '/b'], write: ['/w'] },
          exec: { mode: 'allowlist', binaries: ['z', 'a', 'z'] },
          network: { mode: 'allowlist', domains: ['b.example.com', 'a.example.com'] },
        }),
      ),
    ).toBe(
      JSON.stringify({
        exec: { binaries: ['a', 'z'], mode: 'allowlist' },
        fs: { read: ['/a', '/b'], write: ['/w'] },
        max_duration_ms: 1000,
        max_memory_mb: 64,
        max_output_bytes: 1024,
        min_tier: 'full',
        network: { domains: ['a.example.com', 'b.example.com'], mode: 'allowlist' },
        profile: 'p',
      }),
    );
    const withLater = JSON.parse(
      canonicalProfile(profile({ fs: { read: [], write: [], hardlinks: false }, max_write_bytes: 5 })),
    );
    expect(withLater.fs).toEqual({ hardlinks: false, read: [], write: [] });
    expect(withLater.max_write_bytes).toBe(5);
  });

  it('hashes the tagged canonical form with BLAKE3, the same sync and async', async () => {
    const base = profile();
    const expected = await blake3Digest(`metnos.profile.v1\n${canonicalProfile(base)}`);
    expect(await profileHash(base)).toBe(expected);
    expect(profileHashSync(base)).toBe(expected);
    expect(expected).toMatch(/^blake3:[0-9a-f]{64}$/);
  });

  it('changes with every field that widens or narrows the profile', async () => {
    const base = profile();
    const hash = await profileHash(base);
    const changes: Array<Partial<DeclaredProfile>> = [
      { profile: 'q' },
      { min_tier: 'standard' },
      { max_duration_ms: 1001 },
      { max_memory_mb: 65 },
      { max_output_bytes: 1025 },
      { max_write_bytes: 1 },
      { fs: { read: ['/a'], write: [] } },
      { fs: { read: [], write: ['/a'] } },
      { fs: { read: [], write: [], hardlinks: true } },
      { exec: { mode: 'allowlist', binaries: [] } },
      { exec: { mode: 'none', binaries: ['git'] } },
      { network: { mode: 'allowlist', domains: [] } },
      { network: { mode: 'none', domains: ['a.example.com'] } },
    ];
    const hashes = await Promise.all(changes.map((change) => profileHash(profile(change))));
    for (const changed of hashes) expect(changed).not.toBe(hash);
    expect(new Set(hashes).size).toBe(hashes.length);
  });
});
