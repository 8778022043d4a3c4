import { X509Certificate } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type PublicKey, parsePublicKey, writeFileAtomic } from '@metnos/executor-sdk';
import { z } from 'zod';
import type { LaptopPlaces } from './places.ts';
import { RemoteError } from './protocol/errors.ts';

/** What `device.json` holds: who this laptop is to its server, and what it pinned at pairing. */
export const deviceFileSchema = z
  .object({
    v: z.literal(1),
    device: z.string().regex(/^dev_[a-z0-9]{8,32}$/),
    name: z.string().min(1).max(64),
    /** The server's device channel, `host:port`. */
    server: z.string().min(3).max(300),
    /** The executor signing keys the server trusts, as `.pub` texts: only these sign what this laptop runs. */
    trustedKeys: z.array(z.string().max(1024)).max(64),
    /** The folder remote executors may work in (`$WORKSPACE` of their profile). */
    grant: z.string().optional(),
    pairedAt: z.string(),
  })
  .strict();

export type DeviceFile = z.infer<typeof deviceFileSchema>;

/** The paired device: its key and certificate, the pinned CA, and `device.json`. */
export interface DeviceIdentity extends DeviceFile {
  key: string;
  certificate: string;
  ca: string;
  keys: PublicKey[];
}

const FILES = { key: 'device.key', certificate: 'device.pem', ca: 'ca.pem', device: 'device.json' } as const;

/**
 * Writes what pairing produced, each file mode 0600 in a 0700 folder: the
 * private key never leaves this folder, which the sandbox masks from every
 * executor (it is inside the Metnos config dir).
 */
export async function saveIdentity(
  places: LaptopPlaces,
  identity: Omit<DeviceIdentity, 'keys'>,
): Promise<void> {
  await mkdir(places.deviceDir, { recursive: true, mode: 0o700 });
  const { key, certificate, ca, ...file } = identity;
  await writeFileAtomic(join(places.deviceDir, FILES.key), key, 0o600);
  await writeFileAtomic(join(places.deviceDir, FILES.certificate), certificate, 0o600);
  await writeFileAtomic(join(places.deviceDir, FILES.ca), ca, 0o600);
  await saveDeviceFile(places, file);
}

/** Rewrites `device.json` (after a grant changes). */
export async function saveDeviceFile(places: LaptopPlaces, file: DeviceFile): Promise<void> {
  await writeFileAtomic(
    join(places.deviceDir, FILES.device),
    `${JSON.stringify(deviceFileSchema.parse(file), null, 2)}\n`,
    0o600,
  );
}

/**
 * Reads the paired device, or refuses with `not_paired` and what to do. The
 * certificate must have been issued by the pinned CA.
 *
 * @example
 * const identity = await loadIdentity(laptopPlaces({}));
 */
export async function loadIdentity(places: LaptopPlaces): Promise<DeviceIdentity> {
  const read = (name: string) => readFile(join(places.deviceDir, name), 'utf8');
  let text: string;
  try {
    text = await read(FILES.device);
  } catch {
    throw new RemoteError({
      code: 'not_paired',
      message: `this laptop is not paired (no ${join(places.deviceDir, FILES.device)}): run \`metnos-laptop pair <server> <code>\` with a code from \`metnos devices pair\``,
    });
  }
  let file: DeviceFile;
  try {
    file = deviceFileSchema.parse(JSON.parse(text));
  } catch {
    throw new RemoteError({
      code: 'not_paired',
      message: `${FILES.device} is damaged: pair this laptop again`,
    });
  }
  const [key, certificate, ca] = await Promise.all([
    read(FILES.key),
    read(FILES.certificate),
    read(FILES.ca),
  ]);
  const caCertificate = new X509Certificate(ca);
  if (!new X509Certificate(certificate).verify(caCertificate.publicKey))
    throw new RemoteError({
      code: 'not_paired',
      message: 'the device certificate was not issued by the pinned CA',
    });
  const keys = await Promise.all(
    file.trustedKeys.map((text, index) => parsePublicKey(text, `trusted key ${index + 1}`)),
  );
  return { ...file, key, certificate, ca, keys };
}
