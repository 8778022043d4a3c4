import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The one place library code reads the environment: an explicit option wins,
 * then the named variable, then the fallback.
 *
 * @example
 * const dir = loadSetting({ value: options.configDir, env: 'METNOS_CONFIG_DIR', fallback: () => defaultDir });
 */
export function loadSetting(settings: {
  value: string | undefined;
  env: string;
  fallback: () => string;
}): string {
  if (settings.value !== undefined && settings.value !== '') return settings.value;
  const fromEnv = process.env[settings.env];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  return settings.fallback();
}

/** The user's Metnos config dir: `$METNOS_CONFIG_DIR`, else `$XDG_CONFIG_HOME/metnos`, else `~/.config/metnos`. */
export function resolveConfigDir(value?: string): string {
  return loadSetting({
    value,
    env: 'METNOS_CONFIG_DIR',
    fallback: () => join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'metnos'),
  });
}
