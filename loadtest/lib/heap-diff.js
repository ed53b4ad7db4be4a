/**
 * Compares two V8 heap snapshots of the server by what the application keeps: the
 * self size of objects, arrays, closures and strings, grouped by constructor (or
 * string), leaving out V8's own bookkeeping (compiled code, feedback, hidden
 * internals), which grows for the first minutes of any run without being a leak.
 */
import { readFileSync } from 'node:fs';

const APPLICATION_TYPES = new Set(['object', 'array', 'closure', 'string', 'concatenated string', 'sliced string', 'regexp', 'number', 'bigint']);

function summarize(file) {
  const snapshot = JSON.parse(readFileSync(file, 'utf8'));
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = [fields.indexOf('type'), fields.indexOf('name'), fields.indexOf('self_size')];
  const groups = new Map();
  for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
    const type = types[snapshot.nodes[i + typeAt]];
    if (!APPLICATION_TYPES.has(type)) continue;
    const rawName = snapshot.strings[snapshot.nodes[i + nameAt]];
    if (rawName.startsWith('system /') || (type === 'array' && rawName.startsWith('('))) continue;
    const name = type.endsWith('string') ? '(strings)' : type === 'number' ? '(heap numbers)' : `${type} ${rawName || '(anonymous)'}`;
    const group = groups.get(name) ?? { count: 0, bytes: 0 };
    group.count++;
    group.bytes += snapshot.nodes[i + sizeAt];
    groups.set(name, group);
  }
  return groups;
}

/**
 * Growth of application objects from `before` to `after`: total bytes and count,
 * and the groups that grew most.
 */
export function heapDiff(before, after, top = 5) {
  const a = summarize(before);
  const b = summarize(after);
  const rows = [];
  for (const name of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(name) ?? { count: 0, bytes: 0 };
    const y = b.get(name) ?? { count: 0, bytes: 0 };
    rows.push({ name, count: y.count - x.count, bytes: y.bytes - x.bytes });
  }
  rows.sort((p, q) => q.bytes - p.bytes);
  return {
    bytes: rows.reduce((n, r) => n + r.bytes, 0),
    count: rows.reduce((n, r) => n + r.count, 0),
    top: rows.slice(0, top).filter((r) => r.bytes > 0),
  };
}
