import { z } from 'zod';

/** A path relative to the granted folder: `/`-separated, no `.`/`..` segment, no leading `/`. */
export const relativePathSchema = z
  .string()
  .min(1)
  .max(4096)
  .refine(
    (path) =>
      !path.startsWith('/') &&
      !path.includes('\\') &&
      !path.includes('\0') &&
      path.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..'),
    'a path inside the granted folder, relative, with no "." or ".." segment',
  );

/** One file as a manifest records it: where, how big, what content. */
export const fileEntrySchema = z
  .object({
    path: relativePathSchema,
    size: z.number().int().nonnegative(),
    hash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  })
  .strict();

export type FileEntry = z.infer<typeof fileEntrySchema>;

/**
 * A change a remote executor proposes and the laptop's runtime applies,
 * checking every one first: move a file (never over another unless
 * `replace`, and then the one replaced goes to the trash area), or delete one
 * (to the trash area).
 */
export const operationSchema = z.discriminatedUnion('op', [
  z
    .object({
      op: z.literal('move'),
      from: relativePathSchema,
      to: relativePathSchema,
      replace: z.boolean().optional(),
    })
    .strict(),
  z.object({ op: z.literal('delete'), path: relativePathSchema }).strict(),
]);

export type Operation = z.infer<typeof operationSchema>;

/** At most this many operations in one call. */
export const MAX_OPERATIONS = 100_000;

/**
 * The before/after record of a call that changed laptop files: `before` holds
 * the files as they were (sources, and anything replaced or deleted), `after`
 * the files the call left (destinations), each with size and hash.
 */
export const fileManifestSchema = z
  .object({
    before: z.array(fileEntrySchema).max(MAX_OPERATIONS * 2),
    after: z.array(fileEntrySchema).max(MAX_OPERATIONS * 2),
  })
  .strict();

export type FileManifest = z.infer<typeof fileManifestSchema>;
