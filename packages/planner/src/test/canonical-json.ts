import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every depth and no whitespace, so equal
 * values always give equal text (and equal hashes). `undefined` object
 * members are dropped, as JSON does. Values JSON cannot carry faithfully —
 * BigInt, functions, symbols, NaN/Infinity, cycles — throw a `TypeError`
 * naming where they sit, instead of silently turning into something else.
 *
 * @example
 * canonicalJson({ b: 1, a: [true, null] }); // '{"a":[true,null],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  const onPath = new Set<object>();
  const encode = (item: unknown, path: string): string => {
    if (item === null) return 'null';
    switch (typeof item) {
      case 'string':
      case 'boolean':
        return JSON.stringify(item);
      case 'number':
        if (!Number.isFinite(item)) throw new TypeError(`${path}: ${item} is not a JSON number`);
        return JSON.stringify(item);
      case 'object': {
        const toJson = (item as { toJSON?: unknown }).toJSON;
        if (typeof toJson === 'function') return encode(toJson.call(item), path);
        if (onPath.has(item)) throw new TypeError(`${path}: circular reference`);
        onPath.add(item);
        let text: string;
        if (Array.isArray(item)) {
          text = `[${item.map((element, index) => (element === undefined ? 'null' : encode(element, `${path}[${index}]`))).join(',')}]`;
        } else {
          const record = item as Record<string, unknown>;
          const members = Object.keys(record)
            .filter((key) => record[key] !== undefined)
            .sort()
            .map((key) => `${JSON.stringify(key)}:${encode(record[key], `${path}.${key}`)}`);
          text = `{${members.join(',')}}`;
        }
        onPath.delete(item);
        return text;
      }
      default:
        throw new TypeError(`${path}: a ${typeof item} is not JSON`);
    }
  };
  return encode(value, '$');
}

/**
 * SHA-256 of a text, as lowercase hex.
 *
 * @example
 * sha256Hex(''); // 'e3b0c442…b855'
 */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * SHA-256 of a value's canonical JSON: equal values, equal digests, whatever the key order.
 *
 * @example
 * digest({ a: 1, b: 2 }) === digest({ b: 2, a: 1 }); // true
 */
export function digest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
