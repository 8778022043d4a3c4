/** Domain-separation tag of the signed statement; bumping it versions the format. */
export declare const SIGNATURE_TAG: 'metnos.executor.signature.v1';
/** What a signature covers: the signer, the identity and the artefact digests. */
export interface SignatureStatement {
  keyId: string;
  name: string;
  version: string;
  manifest: string;
  code: string;
  schema: string;
  profileLock: string;
}
/** The exact bytes that are signed. Throws when a field contains a newline. */
export declare function statementBytes(statement: SignatureStatement): Uint8Array;
/** The statement a parsed `manifest.sig` claims was signed. */
export declare function claimedStatement(file: {
  key_id: string;
  name: string;
  version: string;
  digests: { manifest: string; code: string; schema: string; profile_lock: string };
}): SignatureStatement;
