// Hand-written shape checks for the files Metnos reads at every start (ledger,
// lifecycle, signature files). Each one accepts exactly what its zod schema
// accepts without change; anything else goes through the schema, which gives the
// precise message. They exist because a fresh process pays zod's warm-up on
// every record of a large catalog.

/** A plain object: not null, not an array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** No keys: for a table whose keys are all optional. */
export const NO_KEYS: readonly string[] = [];

/** True when `value` has every `required` key and no key outside `required` and `optional`. */
export function hasOnlyKeys(
  value: Record<string, unknown>,
  required: readonly string[],
  optional: readonly string[] = NO_KEYS,
): boolean {
  let present = 0;
  // indexed: a catalog's load calls this for every table of every manifest, mostly before the
  // code is optimised, where an iterator costs an object per key
  const keys = Object.keys(value);
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    if (required.includes(key)) present++;
    else if (!optional.includes(key)) return false;
  }
  return present === required.length;
}

/** A string, or absent. */
export function isOptionalString(value: unknown): boolean {
  return value === undefined || typeof value === 'string';
}

/**
 * True when `data` is `{ version: 1, executors: { <id>: entry } }` and every
 * entry passes `entryIsValid`: the layout of the ledger and the lifecycle file.
 */
export function isVersionOneMap(data: unknown, entryIsValid: (entry: unknown) => boolean): boolean {
  return (
    isPlainObject(data) &&
    hasOnlyKeys(data, ['version', 'executors']) &&
    data.version === 1 &&
    isPlainObject(data.executors) &&
    Object.values(data.executors).every(entryIsValid)
  );
}
