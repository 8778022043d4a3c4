import { z } from 'zod';
import { RemoteError } from './errors.ts';
import { fileEntrySchema, fileManifestSchema } from './files.ts';

/** The largest frame either side reads (an executor update, a manifest of many files). */
export const MAX_FRAME_BYTES = 32 * 1024 * 1024;

const key = z.string().regex(/^[A-Za-z0-9_-]{8,64}$/);
const trace = z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/);
const name = z.string().regex(/^[a-z][a-z0-9_]{1,63}$/);
const hex = z.string().regex(/^[0-9a-f]{64}$/);
const digest = z.string().regex(/^blake3:[0-9a-f]{64}$/);
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/);
const text = (max: number) => z.string().max(max);

/** An executor result as the laptop reports it: the SDK's shape, kept as data. */
export const remoteResultSchema = z
  .object({
    ok: z.boolean(),
    content: z.unknown().optional(),
    error: z
      .object({ class: text(64), message: text(4000) })
      .strict()
      .optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    isolation: z
      .object({
        tier: z.enum(['none', 'basic', 'standard', 'full']),
        layers: z.array(text(64)).max(64),
        belowDeclared: z.boolean().optional(),
        notes: z.array(text(1000)).max(256).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type RemoteResult = z.infer<typeof remoteResultSchema>;

/** The laptop's audit line of one call: what it did to its files, correlated by trace id. */
export const laptopAuditSchema = z
  .object({
    ts: z.string(),
    trace_id: trace,
    key,
    device: z.string(),
    executor: z.string(),
    version: z.string().optional(),
    exit: z.enum(['ok', 'error', 'refused', 'replayed']),
    error_class: z.string().optional(),
    duration_ms: z.number().nonnegative(),
    tier: z.string().optional(),
    touched: z
      .array(
        z
          .object({
            path: z.string(),
            from: z.string().optional(),
            hash: z.string().optional(),
            op: z.string(),
          })
          .strict(),
      )
      .max(200_000),
  })
  .strict();

export type LaptopAudit = z.infer<typeof laptopAuditSchema>;

/** A cached executor as the laptop lists it when it connects. */
const cachedSchema = z.object({ name, version: text(64), code: digest }).strict();

/** The six artefacts' files (tests stay on the server), base64, by file name. */
const artefactFilesSchema = z.record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/), base64);

/** Frames the laptop sends. */
export const laptopFrameSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('pair-hello'), lookup: hex }).strict(),
  z
    .object({
      type: z.literal('pair-request'),
      lookup: hex,
      nonce: z.string().max(128),
      name: z.string().min(1).max(64),
      publicKey: base64.max(4096),
      signature: base64.max(1024),
      proof: hex,
    })
    .strict(),
  z
    .object({
      type: z.literal('hello'),
      agent: text(64),
      platform: text(32),
      tier: z.enum(['none', 'basic', 'standard', 'full']),
      cache: z.array(cachedSchema).max(1000),
    })
    .strict(),
  z
    .object({ type: z.literal('before'), key, trace, entries: z.array(fileEntrySchema).max(200_000) })
    .strict(),
  z
    .object({
      type: z.literal('result'),
      key,
      trace,
      result: remoteResultSchema,
      manifest: fileManifestSchema.optional(),
      audit: laptopAuditSchema,
      replayed: z.boolean(),
    })
    .strict(),
  z
    .object({ type: z.literal('drift'), key, executor: name, have: digest.optional(), reason: text(1000) })
    .strict(),
  z.object({ type: z.literal('updated'), executor: name, version: text(64), code: digest }).strict(),
  z.object({ type: z.literal('update-refused'), executor: name, reason: text(1000) }).strict(),
  z.object({ type: z.literal('refused'), key: key.optional(), code: text(64), reason: text(1000) }).strict(),
]);

export type LaptopFrame = z.infer<typeof laptopFrameSchema>;

/** Frames the server sends. */
export const serverFrameSchema = z.discriminatedUnion('type', [
  z
    .object({ type: z.literal('pair-challenge'), nonce: z.string().max(128), ca: text(8192), proof: hex })
    .strict(),
  z
    .object({
      type: z.literal('pair-done'),
      device: z.string(),
      name: z.string(),
      certificate: text(8192),
      trustedKeys: z.array(text(1024)).max(64),
    })
    .strict(),
  z.object({ type: z.literal('pair-refused'), reason: text(1000) }).strict(),
  z.object({ type: z.literal('welcome'), device: z.string(), name: z.string() }).strict(),
  z
    .object({
      type: z.literal('call'),
      key,
      trace,
      token: z.string().max(8192),
      executor: name,
      version: text(64),
      args: z.unknown(),
    })
    .strict(),
  z.object({ type: z.literal('before-ack'), key }).strict(),
  z
    .object({ type: z.literal('update'), executor: name, version: text(64), files: artefactFilesSchema })
    .strict(),
  z.object({ type: z.literal('undo'), key, trace, token: z.string().max(8192), target: key }).strict(),
  z.object({ type: z.literal('bye'), code: text(64), reason: text(1000) }).strict(),
]);

export type ServerFrame = z.infer<typeof serverFrameSchema>;

/** A frame as one line of JSON. */
export function encodeFrame(frame: LaptopFrame | ServerFrame): string {
  return `${JSON.stringify(frame)}\n`;
}

/**
 * Splits a byte stream into frames (one JSON object per line) and checks each
 * against `schema`. A line longer than {@link MAX_FRAME_BYTES}, not JSON, or
 * not a known frame is reported through `onBad` with a {@link RemoteError}
 * (`bad_frame`), and the caller closes the link: a peer that sends garbage is
 * not talked to further.
 *
 * @example
 * socket.on('data', createFrameReader(serverFrameSchema, onFrame, onBad));
 */
export function createFrameReader<T>(
  schema: z.ZodType<T>,
  onFrame: (frame: T) => void,
  onBad: (error: RemoteError) => void,
): (chunk: Buffer) => void {
  let pending: Buffer[] = [];
  let size = 0;
  let broken = false;
  return (chunk) => {
    if (broken) return;
    let start = 0;
    for (let index = chunk.indexOf(0x0a); index !== -1; index = chunk.indexOf(0x0a, start)) {
      pending.push(chunk.subarray(start, index));
      const line = Buffer.concat(pending).toString('utf8');
      pending = [];
      size = 0;
      start = index + 1;
      if (line.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        broken = true;
        onBad(new RemoteError({ code: 'bad_frame', message: 'a frame is not JSON' }));
        return;
      }
      const parsed = schema.safeParse(value);
      if (!parsed.success) {
        broken = true;
        const type = (value as { type?: unknown })?.type;
        onBad(
          new RemoteError({
            code: 'bad_frame',
            message: `a frame${typeof type === 'string' ? ` "${type.slice(0, 32)}"` : ''} is not one this side accepts`,
          }),
        );
        return;
      }
      onFrame(parsed.data);
    }
    const rest = chunk.subarray(start);
    size += rest.length;
    if (size > MAX_FRAME_BYTES) {
      broken = true;
      onBad(
        new RemoteError({ code: 'bad_frame', message: `a frame is larger than ${MAX_FRAME_BYTES} bytes` }),
      );
      return;
    }
    if (rest.length > 0) pending.push(rest);
  };
}
