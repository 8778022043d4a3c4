export { argsDigest, canonicalJson } from './canonical.ts';
export { RemoteError } from './errors.ts';
export {
  type FileEntry,
  type FileManifest,
  fileEntrySchema,
  fileManifestSchema,
  MAX_OPERATIONS,
  type Operation,
  operationSchema,
  relativePathSchema,
} from './files.ts';
export {
  createFrameReader,
  encodeFrame,
  type LaptopAudit,
  type LaptopFrame,
  laptopAuditSchema,
  laptopFrameSchema,
  MAX_FRAME_BYTES,
  type RemoteResult,
  remoteResultSchema,
  type ServerFrame,
  serverFrameSchema,
} from './frames.ts';
export {
  derDigest,
  devicePairingProof,
  newPairingCode,
  normalizePairingCode,
  pairingLookup,
  pairingSecret,
  possessionStatement,
  proofMatches,
  serverPairingProof,
} from './pairing.ts';
export {
  CLOCK_SKEW_MS,
  signCallToken,
  TOKEN_LIFETIME_MS,
  TOKEN_TAG,
  type TokenClaims,
  tokenClaimsSchema,
  verifyCallToken,
} from './token.ts';

/** The TLS settings both sides use: TLS 1.3 and nothing older. */
export const TLS_VERSION = 'TLSv1.3' as const;

/** The executor name an undo's token carries. */
export const UNDO_EXECUTOR = 'metnos.undo';

/** The capability of a remote executor whose `operations` the laptop's runtime applies. */
export const PROPOSE_CAPABILITY = 'fs:propose';

/** The common name of the certificate the server presents on its device channel. */
export const SERVER_COMMON_NAME = 'metnos-server';
