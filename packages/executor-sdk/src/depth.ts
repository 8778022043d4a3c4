/**
 * The deepest nesting of objects and arrays Metnos accepts in any JSON-like
 * value that crosses a boundary: tool arguments from a model, executor input
 * and output, `schema.json`, `--args` on the command line. The top-level
 * object or array is level 1; a scalar is level 0. Every recursive walk in
 * Metnos (JSON Schema validation, placeholder resolution, `JSON.stringify`)
 * runs only on values checked against it, so none can exhaust the stack.
 *
 * @example
 * if (exceedsJsonDepth(args)) return failure('InvalidInput', `arguments nest deeper than ${MAX_JSON_DEPTH} levels`);
 */
export const MAX_JSON_DEPTH = 64;

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !ArrayBuffer.isView(value);
}

/**
 * Whether `value` nests objects or arrays more than `limit` levels deep.
 * Walks with an explicit stack (no recursion), so it answers for a value of
 * any depth. A value that contains itself counts as too deep. Shared
 * sub-objects are walked again only when reached at a greater depth, so the
 * cost stays linear for trees and bounded for graphs.
 *
 * @example
 * exceedsJsonDepth({ a: { b: 1 } }, 2); // false
 * exceedsJsonDepth({ a: { b: [1] } }, 2); // true
 */
export function exceedsJsonDepth(value: unknown, limit: number = MAX_JSON_DEPTH): boolean {
  if (!isContainer(value)) return false;
  const deepestSeen = new Map<object, number>();
  const nodes: object[] = [value];
  const levels: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const level = levels.pop()!;
    if (level > limit) return true;
    const seen = deepestSeen.get(node);
    if (seen !== undefined && seen >= level) continue;
    deepestSeen.set(node, level);
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (!isContainer(child)) continue;
      nodes.push(child);
      levels.push(level + 1);
    }
  }
  return false;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * The deepest nesting of `{` and `[` in JSON text, counted outside strings,
 * without parsing it: a file such as `schema.json` can be refused before
 * `JSON.parse` builds a structure nothing else could walk. Text that is not
 * JSON gives a number that means nothing; `JSON.parse` refuses it next.
 *
 * @example
 * jsonTextDepth('{"a":[1,"[[["]}'); // 2
 */
export function jsonTextDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
  }
  return deepest;
}
