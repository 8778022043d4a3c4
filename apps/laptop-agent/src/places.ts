import { homedir } from 'node:os';
import { join } from 'node:path';
import { resolveConfigDir } from '@metnos/executor-sdk';

/** Where the laptop agent keeps what it owns. */
export interface LaptopPlaces {
  /** The Metnos config dir (`METNOS_CONFIG_DIR`, else `~/.config/metnos`): masked from every executor. */
  configDir: string;
  /** `<config dir>/device`: the device key, its certificate, the pinned CA, `device.json`. */
  deviceDir: string;
  /** `<state>/metnos/laptop`: the ledger, the executor cache, the trash area, the audit log. */
  stateDir: string;
  /** The person's home, for the core forbidden paths under it. */
  home: string;
}

/**
 * The laptop agent's folders, from explicit settings or the environment read
 * once here: the config dir as the rest of Metnos finds it, the state under
 * `XDG_STATE_HOME` (else `~/.local/state`), both of which the sandbox already
 * keeps executors from writing.
 *
 * @example
 * const places = laptopPlaces({});
 * places.stateDir; // '/home/ada/.local/state/metnos/laptop'
 */
export function laptopPlaces(settings: {
  configDir?: string;
  stateDir?: string;
  home?: string;
}): LaptopPlaces {
  const home = settings.home ?? homedir();
  const configDir = resolveConfigDir(settings.configDir);
  const state = process.env.XDG_STATE_HOME || join(home, '.local', 'state');
  return {
    configDir,
    deviceDir: join(configDir, 'device'),
    stateDir: settings.stateDir ?? join(state, 'metnos', 'laptop'),
    home,
  };
}
