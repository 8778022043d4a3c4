import {
  createKeyStore,
  createReceiptChain,
  KeyError,
  type PublicKey,
  type ReceiptChain,
  receiptsDirOf,
  type SigningKey,
} from '@metnos/executor-sdk';

/**
 * The name of the installation's receipt key in the key store
 * (`<config dir>/keys/receipts.key`). It signs receipts only: it is never
 * added to the trusted keys, so it cannot make an executor trusted, and the
 * person's own signing key never has to sit in a long-running server.
 */
export const RECEIPT_KEY = 'receipts';

/**
 * The installation's receipt key: loaded, or made (mode 0600) when there is
 * none yet — `metnos init` makes it, and a workspace that never ran init gets
 * it on its first receipt.
 *
 * @example
 * const { key, created } = await receiptKey();
 */
export async function receiptKey(configDir?: string): Promise<{ key: SigningKey; created: boolean }> {
  const store = createKeyStore({ configDir });
  if ((await store.list()).some((entry) => entry.name === RECEIPT_KEY))
    return { key: await store.load(RECEIPT_KEY), created: false };
  try {
    return { key: await store.create(RECEIPT_KEY), created: true };
  } catch (error) {
    // another Metnos process made it a moment ago
    if (KeyError.isInstance(error)) return { key: await store.load(RECEIPT_KEY), created: false };
    throw error;
  }
}

/**
 * The signed receipt chain of a workspace (`<workspace>/.audit/receipts/`),
 * signed with the installation's receipt key.
 *
 * @example
 * const receipts = await openReceiptChain(place.workspace);
 * const invoker = createInvoker({ catalog, runner, audit, receipts });
 */
export async function openReceiptChain(workspace: string, configDir?: string): Promise<ReceiptChain> {
  const { key } = await receiptKey(configDir);
  return createReceiptChain({ dir: receiptsDirOf(workspace), key });
}

/**
 * The public keys receipts may be signed with: `receipts.pub` and any kept
 * after a rotation (`receipts-<anything>.pub`). Only public halves are read.
 *
 * @example
 * const keys = await receiptPublicKeys();
 */
export async function receiptPublicKeys(configDir?: string): Promise<PublicKey[]> {
  const listed = await createKeyStore({ configDir }).list();
  return listed.filter((entry) => entry.name === RECEIPT_KEY || entry.name.startsWith(`${RECEIPT_KEY}-`));
}
