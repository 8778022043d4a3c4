import { newPairingCode, pairingLookup, pairingSecret } from '@metnos/laptop-agent/protocol';
import type { DeviceStore } from './store.ts';

/** How long a pairing code stays open: ten minutes. */
export const PAIRING_LIFETIME_MS = 10 * 60_000;

/**
 * Opens a one-time pairing code for the executors a new device may run. The
 * store keeps only the value a device finds it by and the secret derived from
 * it; the code is returned once, to be shown to the person, and is good for
 * one pairing, {@link PAIRING_LIFETIME_MS}, and five wrong proofs.
 *
 * @example
 * const { code, expiresAt } = createPairingCode(store, { executors: ['photo_organize'] });
 */
export function createPairingCode(
  store: DeviceStore,
  options: { executors: string[]; now?: number; lifetimeMs?: number },
): { code: string; expiresAt: number } {
  const code = newPairingCode();
  const secret = pairingSecret(code);
  const expiresAt = (options.now ?? Date.now()) + (options.lifetimeMs ?? PAIRING_LIFETIME_MS);
  store.openPairing({
    lookup: pairingLookup(secret),
    secret: secret.toString('hex'),
    executors: options.executors,
    expiresAt,
  });
  return { code, expiresAt };
}
