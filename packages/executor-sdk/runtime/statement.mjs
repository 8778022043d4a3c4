// The exact bytes an executor's signature covers, shared by the verifier (src/signature.ts)
// and its helper thread (verify-helper.mjs), so both check a signature over the same bytes.
// No imports, so the helper starts without the SDK's modules.

/** Domain-separation tag of the signed statement; bumping it versions the format. */
export const SIGNATURE_TAG = 'metnos.executor.signature.v1';

/**
 * The exact bytes that are signed. Every field is on its own labelled line after the tag,
 * and no field can contain a newline (names, versions, key ids and digests are validated
 * before they get here; a newline throws all the same).
 */
export function statementBytes(statement) {
  const lines = [
    SIGNATURE_TAG,
    `key_id=${statement.keyId}`,
    `name=${statement.name}`,
    `version=${statement.version}`,
    `manifest=${statement.manifest}`,
    `code=${statement.code}`,
    `schema=${statement.schema}`,
    `profile_lock=${statement.profileLock}`,
  ];
  for (const line of lines) {
    if (line.includes('\n')) throw new Error('signature statement fields cannot contain newlines');
  }
  return new TextEncoder().encode(`${lines.join('\n')}\n`);
}

/** The statement a parsed `manifest.sig` claims was signed: its key id, identity and digests. */
export function claimedStatement(file) {
  return {
    keyId: file.key_id,
    name: file.name,
    version: file.version,
    manifest: file.digests.manifest,
    code: file.digests.code,
    schema: file.digests.schema,
    profileLock: file.digests.profile_lock,
  };
}
