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
  const text =
    `${SIGNATURE_TAG}\nkey_id=${statement.keyId}\nname=${statement.name}\nversion=${statement.version}\n` +
    `manifest=${statement.manifest}\ncode=${statement.code}\nschema=${statement.schema}\n` +
    `profile_lock=${statement.profileLock}\n`;
  // one newline after each of the eight lines, and none inside a field
  let newlines = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) newlines++;
  if (newlines !== STATEMENT_LINES) throw new Error('signature statement fields cannot contain newlines');
  return encoder.encode(text);
}

/** The lines of a statement: the tag and seven fields. */
const STATEMENT_LINES = 8;
const encoder = new TextEncoder();

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
