import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createBirthHarness,
  type ExecutorResult,
  type ExecutorRunner,
  generateSigningKey,
  signExecutor,
} from '@metnos/executor-sdk';
import { renderManifest, writeCaseFiles, writeExecutorFolder } from './artefacts.ts';
import type { BirthCase, Specification } from './spec-schema.ts';
import type { Grants } from './types.ts';

/** One birth case's outcome under one profile. */
export interface CaseReport {
  name: string;
  passed: boolean;
  /** What came back: ok, or the error class and its message (cut). */
  got: { ok: true } | { ok: false; class: string; message: string };
}

/** What a draft is, for a staged run: the spec, the checked code and schema. */
export interface StagedDraft {
  runId: string;
  spec: Specification;
  code: string;
  schema: string;
}

/**
 * Does `actual` hold everything `expected` says? Objects: every key of
 * `expected`, recursively; arrays: the same length, element by element;
 * anything else: equal. (The same rule as vitest's `toMatchObject`, which the
 * installed birth test uses.)
 */
export function matches(expected: unknown, actual: unknown): boolean {
  if (Array.isArray(expected))
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((item, index) => matches(item, actual[index]))
    );
  if (expected !== null && typeof expected === 'object')
    return (
      actual !== null &&
      typeof actual === 'object' &&
      Object.entries(expected).every(([key, value]) =>
        matches(value, (actual as Record<string, unknown>)[key]),
      )
    );
  return Object.is(expected, actual);
}

function judge(test: BirthCase, result: ExecutorResult): CaseReport {
  const got: CaseReport['got'] = result.ok
    ? { ok: true }
    : { ok: false, class: result.error.class, message: result.error.message.slice(0, 300) };
  const passed = test.expect.ok
    ? result.ok && (test.expect.content === undefined || matches(test.expect.content, result.content))
    : !result.ok && result.error.class === test.expect.error_class;
  return { name: test.name, passed, got };
}

/**
 * Runs birth cases against a draft under one set of grants, the way Metnos
 * runs an executor for real: the draft is written to a staging folder,
 * signed with a key made for this run alone (trusted by this harness only,
 * never stored), verified, and every case invoked through `runner` (the real
 * sandbox) in a fresh workspace holding the case's files. Nothing of it
 * outlives the call.
 *
 * @example
 * const reports = await runBirthCases(draft, { read: [], write: [], domains: [] }, spec.birth_tests, runner);
 * reports.every((report) => report.passed);
 */
export async function runBirthCases(
  draft: StagedDraft,
  grants: Grants,
  cases: readonly BirthCase[],
  runner: ExecutorRunner,
): Promise<CaseReport[]> {
  const stage = await mkdtemp(join(tmpdir(), 'metnos-synt-'));
  try {
    const dir = join(stage, 'executors', draft.spec.name);
    const manifest = renderManifest(draft.spec, grants, { runId: draft.runId, createdAt: new Date() });
    await writeExecutorFolder(
      dir,
      { manifest, code: draft.code, schema: draft.schema, cases: [...cases], grants },
      { name: draft.spec.name, runId: draft.runId },
    );
    const key = await generateSigningKey();
    await signExecutor(dir, key);
    const harness = createBirthHarness(dir, { runner, trustedKeys: [key] });
    const reports: CaseReport[] = [];
    for (const [index, test] of cases.entries()) {
      const workspace = join(stage, `workspace-${index}`);
      await mkdir(workspace, { recursive: true });
      await writeCaseFiles(workspace, test);
      reports.push(judge(test, await harness.invoke(test.args, { workspace })));
    }
    return reports;
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}

/** The failures of a set of reports, in one line each. */
export function describeFailures(reports: readonly CaseReport[]): string[] {
  return reports
    .filter((report) => !report.passed)
    .map(
      (report) =>
        `"${report.name}" ${report.got.ok ? 'succeeded where a failure was expected, or returned other content' : `failed with ${report.got.class}: ${report.got.message}`}`,
    );
}

/** Grants in words, for notes and reasons. */
export function describeGrants(grants: Grants): string {
  const parts = [
    grants.read.length > 0 ? `read ${grants.read.join(', ')}` : '',
    grants.write.length > 0 ? `write ${grants.write.join(', ')}` : '',
    grants.domains.length > 0 ? `reach ${grants.domains.join(', ')}` : '',
  ].filter(Boolean);
  return parts.length > 0 ? parts.join('; ') : 'no files, no network';
}
