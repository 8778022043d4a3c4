import type { VerifiedExecutor } from '@metnos/executor-sdk';
import { HOME_SECRETS } from '@metnos/sandbox';

/** Folder names no remote call's argument may name, whatever the folder: a home's secrets and Metnos's own config. */
const FORBIDDEN_SEGMENTS = new Set<string>([...HOME_SECRETS.filter((path) => !path.includes('/')), '.audit']);
const FORBIDDEN_NESTED = HOME_SECRETS.filter((path) => path.includes('/'));

/**
 * The server's policy for a remote executor, before anything is sent: its
 * profile may reach only the granted folder (`$WORKSPACE`) and its own
 * temporary folder, with no network and no other program, since the laptop
 * has nothing else to give it; every string argument that looks like a path
 * must be relative, must not climb (`..`) or start at a home (`~`), and must
 * not name a core forbidden folder (`.ssh`, `.gnupg`, `.config/metnos` …).
 * The laptop checks again, on its real paths, before every operation.
 * Returns why the call is refused, or undefined.
 *
 * @example
 * remotePolicyRefusal(executor, { folder: '../.ssh' }); // 'the argument /folder climbs out of the granted folder ("..")'
 */
export function remotePolicyRefusal(executor: VerifiedExecutor, args: unknown): string | undefined {
  const profile = executor.manifest.sandbox;
  for (const entry of [...profile.fs.read, ...profile.fs.write])
    if (!/^\$(WORKSPACE|TMP)(\/|$)/.test(entry))
      return `${executor.name}'s profile reaches ${entry}; a remote executor may reach only $WORKSPACE (the laptop's granted folder) and $TMP`;
  if (profile.network.mode !== 'none')
    return `${executor.name}'s profile uses the network, which a remote executor may not`;
  if (profile.exec.mode !== 'none')
    return `${executor.name}'s profile runs other programs, which a remote executor may not`;
  return argumentRefusal(args, '');
}

function argumentRefusal(value: unknown, where: string, depth = 0): string | undefined {
  if (depth > 32) return `the argument ${where || '/'} nests too deep`;
  if (typeof value === 'string') {
    const shown = `the argument ${where || '/'}`;
    if (value.startsWith('/') || /^[A-Za-z]:[\\/]/.test(value) || value.startsWith('\\\\'))
      return `${shown} is an absolute path; remote paths are relative to the laptop's granted folder`;
    if (value.startsWith('~')) return `${shown} starts at a home folder ("~")`;
    const segments = value.split(/[\\/]/);
    if (segments.includes('..')) return `${shown} climbs out of the granted folder ("..")`;
    for (const [index, segment] of segments.entries()) {
      if (FORBIDDEN_SEGMENTS.has(segment)) return `${shown} names ${segment}, a core forbidden path`;
      const rest = `${segments.slice(index).join('/')}/`;
      const nested = FORBIDDEN_NESTED.find((forbidden) => rest.startsWith(`${forbidden}/`));
      if (nested) return `${shown} names ${nested}, a core forbidden path`;
    }
    return undefined;
  }
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const refusal = argumentRefusal(item, `${where}/${index}`, depth + 1);
      if (refusal) return refusal;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const refusal = argumentRefusal(item, `${where}/${key}`, depth + 1);
      if (refusal) return refusal;
    }
  }
  return undefined;
}
