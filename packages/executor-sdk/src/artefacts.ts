/** The fixed file names of an executor version directory (the code file is named by the manifest). */
export const ARTEFACTS = {
  manifest: 'manifest.toml',
  signature: 'manifest.sig',
  schema: 'schema.json',
  profileLock: 'profile.lock',
  tests: 'tests',
  current: 'CURRENT',
} as const;

/** Folder names inside an executors directory that are not executors. */
export const RESERVED_DIRS = new Set(['.archive', '.state', '.quarantine']);
