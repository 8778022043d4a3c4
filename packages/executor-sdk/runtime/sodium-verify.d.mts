/** libsodium's detached Ed25519 check: (signature, message, publicKey) → valid. */
export type SodiumVerify = (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array) => boolean;
/** libsodium's check from sodium-native's prebuilt addon, or undefined where it does not load. */
export declare function loadSodiumVerify(): SodiumVerify | undefined;
/** Whether libsodium accepts the signature; false when it refuses, throws or is not there. */
export declare function sodiumAccepts(
  verify: SodiumVerify | undefined,
  signature: Uint8Array,
  message: Uint8Array,
  publicKey: Uint8Array,
): boolean;
