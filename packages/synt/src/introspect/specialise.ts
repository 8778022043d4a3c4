import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readJsonLines, type VerifiedExecutor } from '@metnos/executor-sdk';
import type { Grants } from '../generate/types.ts';
import type { CardDraft, IntrospectionInput } from './types.ts';

/** When a hot case is worth a specialised executor. */
export interface SpecialiseRules {
  /** Successful calls in the window. Default 10. */
  minCalls?: number;
  /** Share of them with the same value of one argument. Default 0.8. */
  minShare?: number;
  /** Days of audit read. Default 30. */
  windowDays?: number;
}

/** One successful call as the audit log records it. */
export interface AuditedCall {
  executor: string;
  input: Record<string, unknown>;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The successful calls of the audit log (`<auditDir>/executors/YYYY-MM-DD.jsonl`)
 * of the last `days` days before `now`. Unreadable lines and files are
 * skipped: a damaged log makes fewer proposals, never a failure.
 */
export async function readAuditedCalls(auditDir: string, now: Date, days: number): Promise<AuditedCall[]> {
  const folder = join(auditDir, 'executors');
  const first = new Date(now.getTime() - days * DAY_MS).toISOString().slice(0, 10);
  const files = await readdir(folder).catch(() => [] as string[]);
  const calls: AuditedCall[] = [];
  for (const file of files.filter(
    (name) => /^\d{4}-\d{2}-\d{2}\.jsonl$/.test(name) && name.slice(0, 10) >= first,
  )) {
    const text = await readFile(join(folder, file), 'utf8').catch(() => '');
    for (const line of readJsonLines(text).records as Array<Record<string, unknown>>) {
      if (line?.exit !== 'ok' || typeof line.executor !== 'string') continue;
      const caller = line.caller as { kind?: string } | undefined;
      if (caller?.kind === 'test') continue;
      const input = line.input;
      if (input !== null && typeof input === 'object' && !Array.isArray(input))
        calls.push({ executor: line.executor, input: input as Record<string, unknown> });
    }
  }
  return calls;
}

/** The argument value most calls share, and its share. */
function hottest(
  calls: readonly AuditedCall[],
): { argument: string; value: string; share: number } | undefined {
  const counts = new Map<string, number>();
  for (const call of calls)
    for (const [argument, value] of Object.entries(call.input))
      if (typeof value === 'string' && value.length > 0 && !value.includes('…('))
        counts.set(`${argument}\u0000${value}`, (counts.get(`${argument}\u0000${value}`) ?? 0) + 1);
  const [best] = [...counts].sort((a, b) => b[1] - a[1]);
  if (!best) return undefined;
  const [argument, value] = best[0].split('\u0000') as [string, string];
  return { argument, value, share: best[1] / calls.length };
}

/**
 * The grants a version fixed to `value` could drop: a URL's host instead of
 * a wider allow-list; a workspace path's first folder instead of the whole
 * workspace. Undefined when nothing narrows: no measurable benefit.
 */
export function narrowedGrants(
  executor: VerifiedExecutor,
  value: string,
): { before: Grants; after: Grants } | undefined {
  const profile = executor.manifest.sandbox;
  const before: Grants = {
    read: [...profile.fs.read],
    write: [...profile.fs.write],
    domains: [...profile.network.domains],
  };
  const after: Grants = structuredClone(before);
  let host: string | undefined;
  try {
    host = /^https?:\/\//i.test(value) ? new URL(value).hostname.toLowerCase() : undefined;
  } catch {}
  if (host && before.domains.length > 0 && (before.domains.length > 1 || before.domains[0]!.startsWith('*.')))
    after.domains = [host];
  const folder = /^(?!\/)(?!\.)([A-Za-z0-9_-]+)\/[^\0]+$/.exec(value)?.[1];
  if (folder && !host)
    for (const key of ['read', 'write'] as const)
      after[key] = before[key].map((entry) => (entry === '$WORKSPACE' ? `$WORKSPACE/${folder}` : entry));
  return JSON.stringify(after) === JSON.stringify(before) ? undefined : { before, after };
}

/**
 * Specialise proposals, only with a measured benefit. Measured from the
 * audit log over `windowDays`: an executor's successful calls, the share of
 * them passing the same value of one argument, and the grants a version fixed
 * to that value would drop (a URL's host instead of the allow-list, a
 * folder instead of the workspace). A card needs at least `minCalls` calls,
 * a share of at least `minShare`, and a grant dropped; a hot case that would
 * drop nothing is no benefit and makes no card.
 *
 * @example
 * specialiseCandidates(input, await readAuditedCalls(auditDir, now, 30));
 */
export function specialiseCandidates(
  input: IntrospectionInput,
  calls: readonly AuditedCall[],
  rules: SpecialiseRules = {},
): CardDraft[] {
  const minCalls = rules.minCalls ?? 10;
  const minShare = rules.minShare ?? 0.8;
  const cards: CardDraft[] = [];
  for (const executor of input.executors) {
    const mine = calls.filter((call) => call.executor === executor.name);
    if (mine.length < minCalls) continue;
    const hot = hottest(mine);
    if (!hot || hot.share < minShare) continue;
    const narrowed = narrowedGrants(executor, hot.value);
    if (!narrowed) continue;
    const share = Math.round(hot.share * 100) / 100;
    cards.push({
      kind: 'specialise',
      key: `specialise:${executor.name}:${hot.argument}=${hot.value}`,
      title: `specialise ${executor.name} for ${hot.argument} = ${hot.value}`,
      motivation: {
        kind: 'specialise',
        executor: executor.name,
        argument: hot.argument,
        value: hot.value,
        calls: mine.length,
        share,
        grantsBefore: narrowed.before,
        grantsAfter: narrowed.after,
      },
      evidence: {
        measured:
          'successful calls in the audit log, the share with the same argument value, and the grants a specialised version drops',
        calls: mine.length,
        share,
        grantsBefore: narrowed.before,
        grantsAfter: narrowed.after,
      },
      note: `${Math.round(share * 100)}% of ${mine.length} calls pass ${hot.argument} = ${hot.value}: a specialised executor would need only ${JSON.stringify(narrowed.after)}`,
    });
  }
  return cards;
}
