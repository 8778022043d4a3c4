/**
 * The SQL each store ran at open before the stores had migrations, copied
 * verbatim from the last version that had it. Files in users' hands were made
 * by exactly this; the tests build such files to check that they are adopted.
 * Never edit: it is history, not schema.
 */
export const LEGACY_SCRATCHPAD_SQL = `
CREATE TABLE IF NOT EXISTS scratchpad_entries (
  id TEXT PRIMARY KEY,
  turn_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  content TEXT NOT NULL,
  metadata TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS scratchpad_entries_turn ON scratchpad_entries (turn_id);
`;

export const LEGACY_GAP_LOG_SQL = `CREATE TABLE IF NOT EXISTS terminator_gaps (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  cause TEXT NOT NULL,
  signature TEXT NOT NULL,
  example TEXT NOT NULL,
  detail TEXT NOT NULL,
  count INTEGER NOT NULL,
  first_seen TEXT NOT NULL,
  last_seen TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS terminator_gaps_key ON terminator_gaps (cause, signature);`;
