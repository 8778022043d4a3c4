import { z } from 'zod';
import { blake3DigestSync, prepareBlake3 } from './hash.ts';

/**
 * Isolation tiers, weakest first. A profile names the weakest tier it accepts;
 * a runner that cannot reach it refuses the call.
 * - `none`: a plain child process with a timeout and output caps.
 * - `basic`: adds resource limits and Node's permission model.
 * - `standard`: adds kernel namespaces (bubblewrap), dropped capabilities and seccomp.
 * - `full`: adds Landlock, a memory cgroup (or the heap limit, reported) and the egress proxy.
 */
export const ISOLATION_TIERS = ['none', 'basic', 'standard', 'full'] as const;
export type IsolationTier = (typeof ISOLATION_TIERS)[number];

/** Numeric rank of a tier, for comparisons. */
export function tierRank(tier: IsolationTier): number {
  return ISOLATION_TIERS.indexOf(tier);
}

/** Path entries may start with `$WORKSPACE`, `$HOME` or `$TMP` (the call's private temp dir). */
const pathEntry = z
  .string()
  .min(1)
  .refine((value) => value.startsWith('/') || /^\$(WORKSPACE|HOME|TMP)(\/|$)/.test(value), {
    message: 'an absolute path or one starting with $WORKSPACE, $HOME or $TMP',
  });

// `$CREDENTIAL:<handle>`: the servers of the person's credential for that handle, expanded per call
const domainEntry = z
  .string()
  .regex(
    /^((\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+(:\d{1,5})?|\$CREDENTIAL:[a-z][a-z_]{0,31})$/,
    {
      message:
        'a lowercase domain name such as "api.example.com", optionally "*.example.com" or with ":port", or "$CREDENTIAL:<handle>"',
    },
  );

/** The declared sandbox profile of an executor, as written in `[sandbox]`. */
export const declaredProfileSchema = z
  .object({
    profile: z.string().min(1, { message: 'a profile name' }),
    min_tier: z.enum(ISOLATION_TIERS).default('full'),
    max_duration_ms: z.number().int().positive().max(600_000),
    max_memory_mb: z.number().int().positive().max(65_536),
    max_output_bytes: z
      .number()
      .int()
      .positive()
      .max(256 * 1024 * 1024),
    /**
     * Total bytes the call may write (files, pipes, sockets). Absent: the
     * runner's default ({@link DEFAULT_MAX_WRITE_BYTES}).
     */
    max_write_bytes: z
      .number()
      .int()
      .positive()
      .max(64 * 1024 * 1024 * 1024)
      .optional(),
    fs: z
      .object({
        read: z.array(pathEntry).default([]),
        write: z.array(pathEntry).default([]),
        /** Opt-in: files with more than one hard link may be named in arguments. */
        hardlinks: z.boolean().optional(),
      })
      .strict()
      .default({ read: [], write: [] }),
    exec: z
      .object({
        mode: z.enum(['none', 'allowlist']).default('none'),
        binaries: z
          .array(z.string().regex(/^[A-Za-z0-9._+-]+$/, { message: 'a bare binary name' }))
          .default([]),
      })
      .strict()
      .default({ mode: 'none', binaries: [] }),
    network: z
      .object({
        mode: z.enum(['none', 'allowlist']).default('none'),
        domains: z.array(domainEntry).default([]),
      })
      .strict()
      .default({ mode: 'none', domains: [] }),
  })
  .strict();

export type DeclaredProfile = z.infer<typeof declaredProfileSchema>;

/** Bytes a call may write when its profile sets no `max_write_bytes`: 32 MiB. */
export const DEFAULT_MAX_WRITE_BYTES = 32 * 1024 * 1024;

/**
 * The canonical form of a profile: keys sorted, allow-lists sorted and
 * de-duplicated, so reordering a list does not change its identity.
 */
export function canonicalProfile(profile: DeclaredProfile): string {
  // most lists are empty or hold one entry: no set to build for them
  const sortedUnique = (values: readonly string[]) =>
    // Stryker disable next-line ConditionalExpression: the set and the sort give a list of one or none back as it is
    values.length < 2 ? values : [...new Set(values)].sort();
  // Fields added later appear only when set, so profiles signed before them keep their lock.
  const canonical = {
    exec: { binaries: sortedUnique(profile.exec.binaries), mode: profile.exec.mode },
    fs: {
      // Stryker disable next-line ConditionalExpression: JSON.stringify leaves out a key whose value is undefined
      ...(profile.fs.hardlinks !== undefined ? { hardlinks: profile.fs.hardlinks } : {}),
      read: sortedUnique(profile.fs.read),
      write: sortedUnique(profile.fs.write),
    },
    max_duration_ms: profile.max_duration_ms,
    max_memory_mb: profile.max_memory_mb,
    max_output_bytes: profile.max_output_bytes,
    // Stryker disable next-line ConditionalExpression: JSON.stringify leaves out a key whose value is undefined
    ...(profile.max_write_bytes !== undefined ? { max_write_bytes: profile.max_write_bytes } : {}),
    min_tier: profile.min_tier,
    network: { domains: sortedUnique(profile.network.domains), mode: profile.network.mode },
    profile: profile.profile,
  };
  return JSON.stringify(canonical);
}

/**
 * The profile hash written to `profile.lock` and `[sandbox].hash` at signing.
 *
 * @example
 * const lock = await profileHash(manifest.sandbox); // 'blake3:…'
 */
export async function profileHash(profile: DeclaredProfile): Promise<string> {
  await prepareBlake3();
  return profileHashSync(profile);
}

/** {@link profileHash} for hot paths, once `prepareBlake3()` has resolved. */
export function profileHashSync(profile: DeclaredProfile): string {
  return blake3DigestSync(`metnos.profile.v1\n${canonicalProfile(profile)}`);
}
