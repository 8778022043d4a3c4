import { realpath, stat } from 'node:fs/promises';
import { forbiddenInside, forbiddenSet, metnosOwnPaths } from '@metnos/sandbox';
import { type DeviceIdentity, saveDeviceFile } from './identity.ts';
import type { LaptopPlaces } from './places.ts';
import { RemoteError } from './protocol/errors.ts';

/**
 * Grants remote executors one folder of this laptop (their `$WORKSPACE`): a
 * real folder, not the home itself, not a system tree, and containing no
 * core forbidden path (a home's `.ssh`, the Metnos config dir) and nothing
 * Metnos keeps for itself (its state, ledger and trash), since a grant that
 * contains one could move it aside. Saved in `device.json`.
 *
 * @example
 * await grantFolder(places, identity, '/home/ada/Pictures'); // '/home/ada/Pictures'
 */
export async function grantFolder(
  places: LaptopPlaces,
  identity: DeviceIdentity,
  folder: string,
): Promise<string> {
  const real = await realpath(folder).catch(() => {
    throw new RemoteError({ code: 'bad_grant', message: `${folder} does not exist` });
  });
  if (!(await stat(real)).isDirectory())
    throw new RemoteError({ code: 'bad_grant', message: `${folder} is not a folder` });
  const home = await realpath(places.home).catch(() => places.home);
  if (real === '/' || real === home)
    throw new RemoteError({
      code: 'bad_grant',
      message: `${folder} is too wide: grant a folder such as ~/Pictures`,
    });
  const forbidden = forbiddenSet({
    homes: [places.home],
    secrets: [places.configDir],
    protect: [
      ...metnosOwnPaths({ home: places.home, nodePath: process.execPath }),
      { path: places.stateDir, why: "the laptop agent's ledger, cache and trash" },
    ],
  });
  const inside = forbiddenInside(real, forbidden);
  const tree = [...forbidden.trees, ...forbidden.protect].find(
    (root) => real === root || real.startsWith(`${root}/`),
  );
  if (inside || tree)
    throw new RemoteError({
      code: 'bad_grant',
      message: `${folder} ${tree ? `is inside ${tree}` : `contains ${inside}`}, which no executor may reach`,
    });
  const { key: _key, certificate: _certificate, ca: _ca, keys: _keys, ...file } = identity;
  await saveDeviceFile(places, { ...file, grant: real });
  return real;
}
