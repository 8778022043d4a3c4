/** The JSON Schema keywords the host's and the executor process's validators both understand. */
export { SUPPORTED_KEYWORDS } from '../runtime/json-schema.mjs';
export { ARTEFACTS } from './artefacts.ts';
export {
  AUDIT_RESERVE_BYTES,
  AUDIT_SUBDIRS,
  type AuditEntry,
  type AuditLog,
  type AuditLogSettings,
  appendAuditLine,
  appendToAuditTree,
  createAuditLog,
  ensureAuditTree,
  summarizeInput,
} from './audit.ts';
export { type BirthCallOptions, type BirthHarnessSettings, createBirthHarness } from './birth.ts';
export {
  type Catalog,
  type CatalogListing,
  type CatalogSettings,
  createCatalog,
  defaultStateDir,
  type QuarantineEntry,
} from './catalog.ts';
export {
  type ChildReport,
  type ChildSpec,
  runChild,
  type SupervisedChildSpec,
  superviseChild,
} from './child-process.ts';
export {
  type Caller,
  type ExpandedProfile,
  expandProfile,
  type InvocationContext,
  invalidAsOf,
  type ProtectedPath,
} from './context.ts';
export {
  CREDENTIAL_DOMAIN,
  CREDENTIAL_HANDLE,
  type CredentialEndpoint,
  type CredentialSet,
  type CredentialTls,
  type CredentialView,
  credentialEndpoints,
  credentialView,
  declaredCredentialHandles,
  endpointAddress,
  type HostCredential,
  type HttpCredential,
  type MailCredential,
  offeredCredentials,
  SECRET_CAPABILITY_PREFIX,
  Secret,
} from './credentials.ts';
export {
  CREDENTIALS_FILE,
  CredentialError,
  type LoadCredentialsSettings,
  loadCredentials,
} from './credentials-file.ts';
export { exceedsJsonDepth, jsonTextDepth, MAX_JSON_DEPTH } from './depth.ts';
export {
  AuditError,
  KeyError,
  LifecycleError,
  ManifestError,
  MetnosError,
  type MetnosErrorSettings,
  ReceiptError,
  type ReceiptFailureReason,
  VerificationError,
  type VerificationFailureReason,
} from './errors.ts';
export { blake3Digest, loadBlake3 } from './hash.ts';
export {
  compareHlc,
  createHlc,
  formatHlc,
  type Hlc,
  type HlcSettings,
  type HlcTimestamp,
  hlcSchema,
} from './hlc.ts';
export {
  declaredHostServices,
  HOST_SERVICE_CAPABILITY_PREFIX,
  HOST_SERVICE_NAME,
  HOST_SERVICES_NAME,
  type HostService,
  type HostServiceAnswer,
  type HostServiceCall,
  type HostServices,
  offeredHostServices,
} from './host-services.ts';
export {
  createInvoker,
  hostValidator,
  type InvokeOptions,
  type Invoker,
  type InvokerSettings,
} from './invoke.ts';
export { appendJsonLine, type JsonLines, readJsonLines } from './jsonl.ts';
export {
  createKeyStore,
  generateSigningKey,
  type KeyStore,
  type KeyStoreSettings,
  keyIdOf,
  type PublicKey,
  parsePublicKey,
  readPublicKey,
  type SigningKey,
  serializePublicKey,
} from './keys.ts';
export {
  canTransition,
  LIFECYCLE_STATES,
  LIFECYCLE_TRANSITIONS,
  type LifecycleRecord,
  type LifecycleState,
  type LifecycleStore,
  openLifecycleStore,
} from './lifecycle.ts';
export { compareVersions, type Manifest, manifestSchema, parseManifest } from './manifest.ts';
export {
  canonicalProfile,
  DEFAULT_MAX_WRITE_BYTES,
  type DeclaredProfile,
  declaredProfileSchema,
  ISOLATION_TIERS,
  type IsolationTier,
  profileHash,
  tierRank,
} from './profile.ts';
export {
  type ChainBreak,
  type ChainBreakReason,
  type ChainRepair,
  type ChainReport,
  canonicalJsonText,
  createReceiptChain,
  type FileLockSettings,
  RECEIPT_STRING_LIMIT,
  RECEIPT_TAG,
  type Receipt,
  type ReceiptChain,
  type ReceiptChainSettings,
  type ReceiptEntry,
  type ReceiptSink,
  type ReceiptValue,
  type RepairReport,
  receiptDigest,
  receiptLine,
  receiptSchema,
  receiptsDirOf,
  receiptText,
  type VerifyChainSettings,
  verifyReceiptChain,
  withFileLock,
} from './receipts/index.ts';
export {
  type ExecutorResult,
  failure,
  HOST_ONLY_ERROR_CLASSES,
  type IsolationRecord,
  RUNTIME_ERROR_CLASSES,
  type RuntimeErrorClass,
} from './result.ts';
export {
  contextRefusal,
  createProcessRunner,
  type ExecutorRunner,
  exitKind,
  HARNESS_PATH,
  harnessCall,
  harnessPreload,
  harnessRequest,
  type ProcessRunnerSettings,
  RUNTIME_DIR,
  type RunReport,
  type RunRequest,
  refusal,
  runnableCode,
} from './runner.ts';
export { type ScaffoldOptions, scaffoldExecutor } from './scaffold.ts';
export { resolveConfigDir } from './settings.ts';
export { type SignResult, setSandboxHash, signExecutor, writeFileAtomic } from './sign.ts';
export {
  claimedStatement,
  DEFAULT_SIGNATURE_BACKEND,
  SIGNATURE_TAG,
  type SignatureBackend,
  type SignatureStatement,
  statementBytes,
  verifySignedBytesAsync,
  verifyStatement,
  verifyStatementAsync,
} from './signature.ts';
export {
  assertTrustOutsideWorkspace,
  createTrustStore,
  findWorkspaceConfig,
  loadTrustedKeys,
  trustPaths,
  type WorkspaceConfig,
  workspaceConfigSchema,
} from './trust.ts';
export {
  loadLocalSecret,
  openVerificationCache,
  type VerificationCache,
  type VerificationCacheSettings,
  type VerifiedSet,
} from './verification-cache.ts';
export {
  artefactStamps,
  contractSchema,
  type VerifiedExecutor,
  type VerifyOutcome,
  type VerifySettings,
  verifyExecutor,
  verifyExecutors,
} from './verify.ts';
