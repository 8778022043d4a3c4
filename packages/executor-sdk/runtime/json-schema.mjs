// A small JSON Schema validator for the executor process. It depends on nothing
// but the language, so the sandbox only has to expose this folder. The host
// validates the same documents with Ajv; the loader refuses schemas that use a
// keyword outside SUPPORTED_KEYWORDS, so both sides always agree.

/** Keywords both validators understand. Annotation keywords are accepted and ignored. */
export const SUPPORTED_KEYWORDS = new Set([
  '$schema',
  '$id',
  '$ref',
  '$comment',
  'title',
  'description',
  'default',
  'examples',
  'format',
  'definitions',
  '$defs',
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
]);

function typeOf(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function matchesType(value, type) {
  const actual = typeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

function resolveRef(root, ref) {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node = root;
  for (const part of ref.slice(2).split('/')) {
    if (node === null || typeof node !== 'object') return undefined;
    // A URI fragment: percent-decoded first, then the JSON Pointer escapes (as Ajv does).
    let key;
    try {
      key = decodeURIComponent(part);
    } catch {
      return undefined;
    }
    key = key.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

function deepEqual(left, right) {
  if (left === right) return true;
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) return false;
  if (Array.isArray(left) !== Array.isArray(right)) return false;
  const leftKeys = Object.keys(left);
  if (leftKeys.length !== Object.keys(right).length) return false;
  return leftKeys.every((key) => deepEqual(left[key], right[key]));
}

function check(schema, value, root, path, errors, depth) {
  if (depth > 64) {
    errors.push(`${path || '/'}: schema nesting too deep`);
    return;
  }
  if (schema === true || schema === undefined) return;
  if (schema === false) {
    errors.push(`${path || '/'}: no value is allowed here`);
    return;
  }
  if (schema.$ref !== undefined) {
    const target = resolveRef(root, schema.$ref);
    if (target === undefined) errors.push(`${path || '/'}: unresolvable $ref ${schema.$ref}`);
    else check(target, value, root, path, errors, depth + 1);
  }
  const at = path || '/';
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((type) => matchesType(value, type))) {
      errors.push(`${at}: expected ${types.join(' or ')}, got ${typeOf(value)}`);
      return;
    }
  }
  if (schema.enum !== undefined && !schema.enum.some((option) => deepEqual(option, value))) {
    errors.push(`${at}: expected one of ${JSON.stringify(schema.enum)}`);
  }
  if (schema.const !== undefined && !deepEqual(schema.const, value)) {
    errors.push(`${at}: expected ${JSON.stringify(schema.const)}`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum)
      errors.push(`${at}: must be >= ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum)
      errors.push(`${at}: must be <= ${schema.maximum}`);
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) {
      errors.push(`${at}: must be > ${schema.exclusiveMinimum}`);
    }
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) {
      errors.push(`${at}: must be < ${schema.exclusiveMaximum}`);
    }
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength)
      errors.push(`${at}: shorter than ${schema.minLength}`);
    if (schema.maxLength !== undefined && length > schema.maxLength)
      errors.push(`${at}: longer than ${schema.maxLength}`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) {
      errors.push(`${at}: does not match ${schema.pattern}`);
    }
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      errors.push(`${at}: fewer than ${schema.minItems} items`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      errors.push(`${at}: more than ${schema.maxItems} items`);
    if (schema.items !== undefined) {
      value.forEach((item, index) => {
        check(schema.items, item, root, `${path}/${index}`, errors, depth + 1);
      });
    }
  }
  if (typeOf(value) === 'object') {
    const properties = schema.properties ?? {};
    for (const key of schema.required ?? []) {
      if (!Object.hasOwn(value, key)) errors.push(`${at}: missing required property "${key}"`);
    }
    for (const [key, item] of Object.entries(value)) {
      if (Object.hasOwn(properties, key))
        check(properties[key], item, root, `${path}/${key}`, errors, depth + 1);
      else if (schema.additionalProperties === false) errors.push(`${at}: unexpected property "${key}"`);
      else if (typeof schema.additionalProperties === 'object') {
        check(schema.additionalProperties, item, root, `${path}/${key}`, errors, depth + 1);
      }
    }
  }
  const count = (options) =>
    options.filter((option) => validateWith(option, value, root, depth + 1).length === 0).length;
  if (schema.allOf !== undefined) {
    for (const option of schema.allOf) check(option, value, root, path, errors, depth + 1);
  }
  if (schema.anyOf !== undefined && count(schema.anyOf) === 0) errors.push(`${at}: matches none of anyOf`);
  if (schema.oneOf !== undefined && count(schema.oneOf) !== 1)
    errors.push(`${at}: must match exactly one of oneOf`);
  if (schema.not !== undefined && validateWith(schema.not, value, root, depth + 1).length === 0) {
    errors.push(`${at}: matches a forbidden schema`);
  }
}

function validateWith(schema, value, root, depth) {
  const errors = [];
  check(schema, value, root, '', errors, depth);
  return errors;
}

/**
 * Validates `value` against `schema` (with `$ref`s resolved inside `root`).
 * Returns the list of problems, empty when valid.
 */
export function validate(schema, value, root = schema) {
  return validateWith(schema, value, root, 0);
}

/** Lists keywords of `schema` outside SUPPORTED_KEYWORDS, with their JSON pointer. */
export function unsupportedKeywords(schema, path = '', found = []) {
  if (schema === null || typeof schema !== 'object') return found;
  // indexed over the keys, into one list: this walks every schema of a catalog at its load
  const keys = Object.keys(schema);
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index];
    const child = schema[key];
    if (!SUPPORTED_KEYWORDS.has(key)) found.push(`${path}/${key}`);
    if (key === 'properties' || key === 'definitions' || key === '$defs') {
      const entries = child ?? {};
      const names = Object.keys(entries);
      for (let at = 0; at < names.length; at++) {
        unsupportedKeywords(entries[names[at]], `${path}/${key}/${names[at]}`, found);
      }
    } else if (key === 'items' || key === 'additionalProperties' || key === 'not') {
      unsupportedKeywords(child, `${path}/${key}`, found);
    } else if (key === 'oneOf' || key === 'anyOf' || key === 'allOf') {
      (child ?? []).forEach((sub, at) => {
        unsupportedKeywords(sub, `${path}/${key}/${at}`, found);
      });
    }
  }
  return found;
}
