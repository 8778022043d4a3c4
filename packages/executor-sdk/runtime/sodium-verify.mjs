// libsodium's Ed25519 check, from sodium-native's prebuilt addon, for the thread that checks a
// whole catalog's signatures (signature-helper.mjs). On this kind of machine it checks a
// signature in about half the time OpenSSL takes. The addon file is loaded directly from the
// package's prebuilds folder, the one sodium-native itself would pick (a -musl folder on
// Alpine), which saves its resolver's start-up; where there is none, or it does not load,
// there is no libsodium check and OpenSSL does them all.
// Built-ins taken with process.getBuiltinModule, as in read-artefact.mjs: a thread starts faster.
const { existsSync } = process.getBuiltinModule('node:fs');
const { createRequire } = process.getBuiltinModule('node:module');
const { dirname, join } = process.getBuiltinModule('node:path');

/**
 * libsodium's `crypto_sign_verify_detached(signature, message, publicKey)`, or undefined when
 * the addon is not there for this platform or does not load.
 */
export function loadSodiumVerify() {
  try {
    const require = createRequire(import.meta.url);
    const root = dirname(require.resolve('sodium-native/package.json'));
    // Stryker disable next-line all: which folder Alpine would use; this machine is not Alpine, and a wrong folder only leaves OpenSSL to check
    const musl = process.platform === 'linux' && existsSync('/etc/alpine-release');
    // Stryker disable next-line StringLiteral: see above
    const host = `${process.platform}-${process.arch}${musl ? '-musl' : ''}`;
    const addon = require(join(root, 'prebuilds', host, 'sodium-native.node'));
    const verify = addon.crypto_sign_verify_detached;
    // Stryker disable next-line ConditionalExpression: sodiumAccepts treats anything that is not a working check as a "no"
    return typeof verify === 'function' ? verify : undefined;
    // Stryker disable next-line BlockStatement: an empty catch returns undefined all the same
  } catch {
    return undefined;
  }
}

/**
 * Whether libsodium accepts the signature. Whatever it accepts (a 64-byte signature, a 32-byte
 * key), node:crypto's OpenSSL accepts too: the same RFC 8032 equation, and libsodium also refuses
 * small-order points and non-canonical keys. So a "yes" here settles the check and a "no" is left
 * to OpenSSL, which decides as before.
 */
export function sodiumAccepts(verify, signature, message, publicKey) {
  // libsodium reads the first 64 bytes of a longer signature and ignores the rest; OpenSSL
  // refuses it, so only an exact signature and key are asked
  if (!verify || signature.length !== 64 || publicKey.length !== 32) return false;
  try {
    return verify(signature, message, publicKey) === true;
  } catch {
    return false;
  }
}
