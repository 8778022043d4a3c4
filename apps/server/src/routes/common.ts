import { jsonTextDepth, MAX_JSON_DEPTH } from '@metnos/executor-sdk';
import type { Context } from 'hono';
import { z } from 'zod';

/** Refusals of the API routes: `{ error, message }` and a status, never a stack trace. */
export type RefusalStatus = 400 | 404 | 409 | 413 | 500;

/** The JSON every refusal answers with. */
export function refuse(c: Context, status: RefusalStatus, error: string, message: string) {
  return c.json({ error, message }, status);
}

/** Bodies of these routes are small: a decision, a version. */
export const MAX_BODY_BYTES = 16 * 1024;
/** Query values longer than this are refused before any parsing. */
const MAX_QUERY_VALUE = 256;
/** Keys that reach for a prototype: refused wherever a client's JSON or query has them. */
const HOSTILE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
/** Nesting a body may have; these routes take flat objects. */
const MAX_BODY_DEPTH = Math.min(8, MAX_JSON_DEPTH);

/** At most this many rows in one answer. */
export const MAX_LIMIT = 500;

/** `?limit=` as digits, 1 to {@link MAX_LIMIT}. */
export const limitParam = z
  .string()
  .regex(/^\d{1,4}$/, 'a number of rows')
  .transform(Number)
  .pipe(z.number().int().min(1).max(MAX_LIMIT));

/** An id in a path: letters, digits and `_ . : -`, at most 128 characters. */
export const idParam = z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'not an id');

type Parsed<T> =
  | { ok: true; value: T }
  | { ok: false; status: 400 | 413; error: 'invalid' | 'too_large'; message: string };

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid input';
  const path = issue.path.map(String).join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** The request body as text, refused as soon as it passes `max` bytes (the rest is never read). */
export async function readCapped(request: Request, max: number): Promise<string | undefined> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > max) return undefined;
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A JSON body checked before and after parsing: at most {@link MAX_BODY_BYTES},
 * nesting at most 8, no `__proto__` / `constructor` / `prototype` key at any
 * depth, then the zod schema (strict objects refuse any other key).
 */
export async function readBody<T>(c: Context, schema: z.ZodType<T>): Promise<Parsed<T>> {
  const text = await readCapped(c.req.raw, MAX_BODY_BYTES);
  if (text === undefined)
    return {
      ok: false,
      status: 413,
      error: 'too_large',
      message: `the body is larger than ${MAX_BODY_BYTES} bytes`,
    };
  if (jsonTextDepth(text) > MAX_BODY_DEPTH)
    return {
      ok: false,
      status: 400,
      error: 'invalid',
      message: `the body nests deeper than ${MAX_BODY_DEPTH} levels`,
    };
  let value: unknown;
  try {
    value = JSON.parse(text, (key, member) => {
      if (HOSTILE_KEYS.has(key)) throw new HostileKey(key);
      return member;
    });
  } catch (error) {
    return {
      ok: false,
      status: 400,
      error: 'invalid',
      message: error instanceof HostileKey ? `the key "${error.key}" is refused` : 'the body is not JSON',
    };
  }
  const parsed = schema.safeParse(value);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, status: 400, error: 'invalid', message: firstIssue(parsed.error) };
}

class HostileKey extends Error {
  readonly key: string;
  constructor(key: string) {
    super(key);
    this.key = key;
  }
}

/**
 * The query string checked by hand, then by the zod schema: every key once,
 * values of at most 256 characters, no prototype keys; the object handed to
 * zod has no prototype, and a strict schema refuses any key it does not name.
 */
export function readQuery<T>(c: Context, schema: z.ZodType<T>): Parsed<T> {
  const params = new URL(c.req.url).searchParams;
  const query: Record<string, string> = Object.create(null);
  for (const [key, value] of params) {
    if (HOSTILE_KEYS.has(key))
      return { ok: false, status: 400, error: 'invalid', message: `the parameter "${key}" is refused` };
    if (Object.hasOwn(query, key))
      return { ok: false, status: 400, error: 'invalid', message: `the parameter "${key}" is given twice` };
    if (value.length > MAX_QUERY_VALUE)
      return { ok: false, status: 400, error: 'invalid', message: `the parameter "${key}" is too long` };
    query[key] = value;
  }
  const parsed = schema.safeParse(query);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, status: 400, error: 'invalid', message: firstIssue(parsed.error) };
}

/** A path parameter through its schema; undefined when it does not pass. */
export function readParam<T>(c: Context, name: string, schema: z.ZodType<T>): T | undefined {
  const parsed = schema.safeParse(c.req.param(name));
  return parsed.success ? parsed.data : undefined;
}

/** Text cut to `length` characters (never inside a surrogate pair), as the CLI shows it. */
export function cut(text: string, length: number): string {
  const chars = Array.from(text);
  return chars.length > length ? chars.slice(0, length).join('') : text;
}

/**
 * Runs tasks one after the other: the catalog and the lifecycle file take one
 * change at a time.
 */
export function createSerial() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>): Promise<T> => {
    const run = tail.then(task, task);
    tail = run.catch(() => undefined);
    return run;
  };
}
