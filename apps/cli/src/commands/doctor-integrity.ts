import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { AUDIT_SUBDIRS } from '@metnos/executor-sdk';
import type { CliPlace } from '../workspace.ts';
import { placeCatalog, placeProtection, trustedKeys } from '../workspace.ts';

/** One integrity finding of `metnos doctor`: what was checked, whether it holds, and what to do. */
export interface IntegrityFinding {
  check: 'helper' | 'audit' | 'profile';
  ok: boolean;
  detail: string;
  fix?: string;
}

async function auditFindings(workspace: string): Promise<IntegrityFinding[]> {
  const root = join(workspace, '.audit');
  const uid = process.getuid?.() ?? 0;
  const findings: IntegrityFinding[] = [];
  for (const path of [root, ...AUDIT_SUBDIRS.map((sub) => join(root, sub))]) {
    const info = await lstat(path).catch(() => undefined);
    if (!info) {
      findings.push({
        check: 'audit',
        ok: true,
        detail: `${path} not created yet (made before the first call)`,
      });
    } else if (info.isSymbolicLink() || !info.isDirectory() || info.uid !== uid) {
      findings.push({
        check: 'audit',
        ok: false,
        detail: `${path} is ${info.isSymbolicLink() ? 'a symlink' : !info.isDirectory() ? 'not a folder' : `owned by uid ${info.uid}`}: every call is refused (AuditUnavailable)`,
        fix: `move it aside (mv ${path} ${path}.suspect) and run again`,
      });
    } else {
      findings.push({ check: 'audit', ok: true, detail: `${path} is a private folder of this user` });
    }
  }
  const reserve = await lstat(join(root, '.reserve')).catch(() => undefined);
  if (reserve && reserve.size === 0)
    findings.push({
      check: 'audit',
      ok: false,
      detail: `${join(root, '.reserve')} was used up: the disk filled, calls are refused until there is room`,
      fix: 'free some space on that disk',
    });
  return findings;
}

/**
 * The integrity part of `metnos doctor`: the sandbox helper's digest check,
 * the workspace's audit tree, and every executor whose profile the current
 * rules refuse (with the rule and why).
 */
export async function integrityFindings(place: CliPlace): Promise<IntegrityFinding[]> {
  const sandbox = await import('@metnos/sandbox');
  const runner = sandbox.createSandboxRunner({ audit: false, configDir: place.configDir });
  const findings: IntegrityFinding[] = [];
  const { helperPath, helperDigest } = runner.host;
  if (helperPath && helperDigest) {
    const problem = sandbox.checkHelper(helperPath, helperDigest);
    findings.push(
      problem
        ? {
            check: 'helper',
            ok: false,
            detail: problem,
            fix: `remove ${helperPath} and run metnos doctor again`,
          }
        : {
            check: 'helper',
            ok: true,
            detail: `${helperPath}: digest, owner, mode and parent folders check out`,
          },
    );
  }
  findings.push(...(await auditFindings(place.workspace)));
  try {
    const catalog = await placeCatalog(place, await trustedKeys(place, place.executors), 'check');
    const { loaded } = await catalog.load();
    const protect = placeProtection(place);
    for (const executor of loaded) {
      const refused = runner.checkProfile(executor, { workspace: place.workspace, protect });
      findings.push(
        refused
          ? {
              check: 'profile',
              ok: false,
              detail: `${executor.name}@${executor.version} is refused here (${refused.rule}): ${refused.message}`,
              fix: 'narrow its profile and sign a new version, or use a workspace that does not contain Metnos files',
            }
          : { check: 'profile', ok: true, detail: `${executor.name}@${executor.version}` },
      );
    }
  } catch (error) {
    findings.push({
      check: 'profile',
      ok: false,
      detail: `the catalog could not be read: ${(error as Error).message}`,
    });
  }
  return findings;
}

/** The findings as text, one line each, failures with their fix. */
export function formatIntegrity(findings: readonly IntegrityFinding[]): string {
  const refusedProfiles = findings.filter((finding) => finding.check === 'profile' && !finding.ok).length;
  const lines = ['integrity:'];
  for (const finding of findings) {
    if (finding.check === 'profile' && finding.ok) continue;
    lines.push(`  ${finding.ok ? 'ok ' : 'no '} ${finding.check.padEnd(8)} ${finding.detail}`);
    if (!finding.ok && finding.fix) lines.push(`       fix: ${finding.fix}`);
  }
  const profiles = findings.filter((finding) => finding.check === 'profile').length;
  lines.push(
    `  ${refusedProfiles === 0 ? 'ok ' : 'no '} profiles ${profiles - refusedProfiles} of ${profiles} accepted by the current rules`,
  );
  return lines.join('\n');
}
