/**
 * The SQL each store ran at open before the stores had migrations, copied
 * verbatim from the last version that had it. Files in users' hands were made
 * by exactly this; the tests build such files to check that they are adopted.
 * Never edit: it is history, not schema.
 */
export const LEGACY_FASTPATH_SQL = `CREATE TABLE IF NOT EXISTS fastpaths (
  id TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL UNIQUE,
  request TEXT NOT NULL,
  template TEXT NOT NULL,
  slots TEXT NOT NULL,
  tools TEXT NOT NULL,
  vector BLOB,
  uses INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  last_used_at TEXT
);`;

export const LEGACY_AUTOPATH_SQL = `
CREATE TABLE IF NOT EXISTS clusters (id TEXT PRIMARY KEY, centroid BLOB NOT NULL, members INTEGER NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS autopaths (
  id TEXT PRIMARY KEY, cluster_id TEXT NOT NULL, intent_hash TEXT NOT NULL, plan_hash TEXT NOT NULL,
  template TEXT NOT NULL, slots TEXT NOT NULL, tools TEXT NOT NULL, uses INTEGER NOT NULL, successes INTEGER NOT NULL,
  failures INTEGER NOT NULL, total_latency_ms REAL NOT NULL, feedback_up INTEGER NOT NULL, feedback_down INTEGER NOT NULL,
  score REAL NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  UNIQUE (cluster_id, plan_hash)
);
CREATE INDEX IF NOT EXISTS autopaths_intent ON autopaths (intent_hash);
CREATE TABLE IF NOT EXISTS anti_autopaths (
  id TEXT PRIMARY KEY, intent_hash TEXT NOT NULL, plan_hash TEXT NOT NULL, reason TEXT NOT NULL,
  failures INTEGER NOT NULL, expires_at TEXT NOT NULL, created_at TEXT NOT NULL, UNIQUE (intent_hash, plan_hash)
);
CREATE TABLE IF NOT EXISTS observations (
  id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, turn_id TEXT NOT NULL, request TEXT NOT NULL,
  intent_hash TEXT, plan_hash TEXT, plan TEXT, layer TEXT NOT NULL, latency_ms REAL NOT NULL, vector BLOB,
  outcome TEXT NOT NULL, error_class TEXT, feedback TEXT
);
CREATE INDEX IF NOT EXISTS observations_turn ON observations (turn_id);
CREATE TRIGGER IF NOT EXISTS observations_append_only BEFORE DELETE ON observations
BEGIN SELECT RAISE(ABORT, 'observations are append-only'); END;
`;

export const LEGACY_VECTOR_INDEX_SQL = `CREATE TABLE IF NOT EXISTS memory_vectors (
  id TEXT PRIMARY KEY,
  space TEXT NOT NULL,
  text TEXT NOT NULL,
  label TEXT,
  embedder_id TEXT NOT NULL,
  vector BLOB NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_vectors_space ON memory_vectors (space);`;
