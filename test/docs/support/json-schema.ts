/**
 * A small JSON Schema (2020-12) checker for the subset docs/openapi.json uses. It refuses
 * keywords it does not know, so the document cannot use one whose meaning would be silently
 * skipped here.
 */

/** A JSON Schema object (the subset below). */
export type Schema = Readonly<Record<string, unknown>>;

const ANNOTATIONS = new Set(['description', 'title', 'summary', 'examples', 'example', 'default', 'deprecated', 'readOnly', 'writeOnly']);
const KEYWORDS = new Set([
  '$ref', 'allOf', 'oneOf', 'anyOf', 'type', 'enum', 'const', 'properties', 'required', 'additionalProperties',
  'items', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'format',
]);
const FORMATS: Readonly<Record<string, (value: string) => boolean>> = {
  'date-time': (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v)),
  email: (v) => /^[^\s@]+@[^\s@]+$/.test(v),
};

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

/** Resolves a local `$ref` (`#/components/schemas/Error`) against `root`. */
export function resolvePointer(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported, got ${ref}`);
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, part)) throw new Error(`unresolvable $ref ${ref}`);
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

/**
 * Checks `value` against `schema`, resolving `$ref`s in `root`. Answers the list of
 * violations, each with the JSON path where it was found; empty means valid.
 *
 * @example
 * ```ts
 * validate(openapi, { $ref: '#/components/schemas/Error' }, body); // [] or ['$.error: not one of …']
 * ```
 */
export function validate(root: unknown, schema: Schema, value: unknown, path = '$'): string[] {
  const errors: string[] = [];
  for (const key of Object.keys(schema)) {
    if (!KEYWORDS.has(key) && !ANNOTATIONS.has(key)) throw new Error(`unsupported JSON Schema keyword "${key}" at ${path}`);
  }
  if (typeof schema.$ref === 'string') errors.push(...validate(root, resolvePointer(root, schema.$ref) as Schema, value, path));
  for (const sub of (schema.allOf as Schema[] | undefined) ?? []) errors.push(...validate(root, sub, value, path));
  if (schema.anyOf !== undefined) {
    const results = (schema.anyOf as Schema[]).map((sub) => validate(root, sub, value, path));
    if (!results.some((r) => r.length === 0)) errors.push(`${path}: matches none of anyOf (${results.map((r) => r.join('; ')).join(' | ')})`);
  }
  if (schema.oneOf !== undefined) {
    const results = (schema.oneOf as Schema[]).map((sub) => validate(root, sub, value, path));
    const matching = results.filter((r) => r.length === 0).length;
    if (matching !== 1) errors.push(`${path}: matches ${matching} of oneOf, expected exactly 1 (${results.map((r) => r.join('; ')).join(' | ')})`);
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
    if (!types.some((t) => typeMatches(value, t))) return [...errors, `${path}: expected ${types.join(' or ')}, got ${typeOf(value)}`];
  }
  if (schema.enum !== undefined && !(schema.enum as unknown[]).some((e) => e === value)) {
    errors.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  }
  if (Object.hasOwn(schema, 'const') && schema.const !== value) errors.push(`${path}: expected ${JSON.stringify(schema.const)}, got ${JSON.stringify(value)}`);
  if (typeof value === 'string') {
    const length = [...value].length;
    if (typeof schema.minLength === 'number' && length < schema.minLength) errors.push(`${path}: shorter than ${schema.minLength}`);
    if (typeof schema.maxLength === 'number' && length > schema.maxLength) errors.push(`${path}: longer than ${schema.maxLength}`);
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) errors.push(`${path}: does not match ${schema.pattern}`);
    if (typeof schema.format === 'string') {
      const check = FORMATS[schema.format];
      if (check === undefined) throw new Error(`unsupported format "${schema.format}" at ${path}`);
      if (!check(value)) errors.push(`${path}: not a valid ${schema.format}`);
    }
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) errors.push(`${path}: below ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) errors.push(`${path}: above ${schema.maximum}`);
  }
  if (typeOf(value) === 'object') {
    const object = value as Record<string, unknown>;
    const properties = (schema.properties as Record<string, Schema> | undefined) ?? {};
    for (const name of (schema.required as string[] | undefined) ?? []) {
      if (!Object.hasOwn(object, name)) errors.push(`${path}: missing required property "${name}"`);
    }
    for (const [name, child] of Object.entries(object)) {
      if (Object.hasOwn(properties, name)) errors.push(...validate(root, properties[name]!, child, `${path}.${name}`));
      else if (schema.additionalProperties === false) errors.push(`${path}: unexpected property "${name}"`);
      else if (typeof schema.additionalProperties === 'object') errors.push(...validate(root, schema.additionalProperties as Schema, child, `${path}.${name}`));
    }
  }
  if (Array.isArray(value) && schema.items !== undefined) {
    value.forEach((item, i) => errors.push(...validate(root, schema.items as Schema, item, `${path}[${i}]`)));
  }
  return errors;
}
