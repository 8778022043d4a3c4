import { realpathSync } from 'node:fs';
import { basename } from 'node:path';
import { findBinary } from './host-probe.ts';
import type { PolicyViolation } from './policy.ts';
import { isWithin } from './resolve-path.ts';

/**
 * File names of dynamic loaders (glibc's `ld.so`, `ld-linux-x86-64.so.2`,
 * `ld-2.31.so`, `ld64.so.2`, musl's `ld-musl-x86_64.so.1`). A loader runs any
 * file it is given, so it is never an allow-listed binary.
 *
 * @example
 * LOADER_NAME.test('ld-linux-x86-64.so.2'); // true
 */
export const LOADER_NAME = /^ld(64)?([.-][\w.-]*)?\.so(\.[\d.]+)?$/;

/** What {@link checkExecRules} needs: the profile's exec allow-list and its resolved folders. */
export interface ExecRulesInput {
  exec: { mode: 'none' | 'allowlist'; binaries: readonly string[] };
  /** Real paths of the profile's read and write lists (`$TMP` included when granted). */
  read: readonly string[];
  write: readonly string[];
  /** Where allow-listed names are looked up. Default: /usr/local/bin, /usr/bin, /bin. */
  binarySearchPath?: readonly string[];
}

function refused(value: string, real: string | undefined, message: string): PolicyViolation {
  return {
    rule: 'profile-bad-exec',
    where: 'profile',
    value: value.length > 200 ? `${value.slice(0, 200)}…` : value,
    ...(real ? { real } : {}),
    message,
  };
}

/**
 * Checks a profile's exec allow-list before anything starts. Profile folders
 * are mounted `noexec` inside the sandbox, so an allow-list may name neither a
 * dynamic loader (by its own name or the file a name such as `ld.so` leads to)
 * nor a binary that lies inside one of the profile's folders. Returns the
 * violation (`rule: 'profile-bad-exec'`), or undefined.
 *
 * @example
 * const violation = checkExecRules({ exec: profile.exec, read: resolved.read, write: resolved.write });
 * if (violation) return refuse(violation);
 */
export function checkExecRules(input: ExecRulesInput): PolicyViolation | undefined {
  if (input.exec.mode !== 'allowlist') return undefined;
  const roots = [...input.read, ...input.write];
  for (const name of input.exec.binaries) {
    const found = findBinary(name, input.binarySearchPath);
    let real: string | undefined;
    try {
      real = found ? realpathSync(found) : undefined;
    } catch {
      real = undefined;
    }
    if (LOADER_NAME.test(name) || (real && LOADER_NAME.test(basename(real)))) {
      return refused(
        name,
        real,
        `the exec allow-list names ${name}${real && real !== name ? ` (${real})` : ''}, the dynamic loader, which runs any file it is given; no profile can allow it`,
      );
    }
    const inside = [found, real].flatMap((path) =>
      path ? roots.filter((root) => isWithin(path, root)).map((root) => ({ path, root })) : [],
    )[0];
    if (inside) {
      return refused(
        name,
        real,
        `the exec allow-list names ${name} (${inside.path}), inside the profile folder ${inside.root}; profile folders are mounted noexec, so binaries must come from outside them`,
      );
    }
  }
  return undefined;
}
