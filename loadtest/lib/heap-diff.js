/**
 * Compares two V8 heap snapshots of the server by what the application keeps: the
 * self size of objects, arrays, closures and strings, grouped by constructor (or
 * string), leaving out V8's own bookkeeping (compiled code, feedback, hidden
 * internals), which grows for the first minutes of any run without being a leak.
 * It also weighs the in-memory session cache's entries by namespace (the key up to
 * its first `:`), so growth the store keeps by design can be told from the rest:
 * an entry weighs its key, its value and what the value holds (a few levels deep,
 * each object counted once), plus its share of the Map's table.
 */
import { readFileSync } from 'node:fs';

const APPLICATION_TYPES = new Set(['object', 'array', 'closure', 'string', 'concatenated string', 'sliced string', 'regexp', 'number', 'bigint']);
/** How deep below an entry's value the walk goes: a record, its arrays or sets, their strings. */
const ENTRY_DEPTH = 5;
const SKIPPED_EDGES = new Set(['map', '__proto__', 'constructor']);

function indexSnapshot(file) {
  const snapshot = JSON.parse(readFileSync(file, 'utf8'));
  const meta = snapshot.snapshot.meta;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const count = snapshot.nodes.length / nf;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += snapshot.nodes[i * nf + meta.node_fields.indexOf('edge_count')] * ef;
    firstEdge[i + 1] = e;
  }
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => meta.node_fields.indexOf(f));
  const at = {
    count,
    type: (i) => nodeTypes[snapshot.nodes[i * nf + typeAt]],
    name: (i) => snapshot.strings[snapshot.nodes[i * nf + nameAt]],
    size: (i) => snapshot.nodes[i * nf + sizeAt],
    /** Edges of node `i`: `{ type, name, to }`; element and hidden edges are named by index. */
    *edges(i) {
      for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += ef) {
        const type = edgeTypes[snapshot.edges[e]];
        const raw = snapshot.edges[e + 1];
        yield { type, name: type === 'element' || type === 'hidden' ? raw : snapshot.strings[raw], to: snapshot.edges[e + 2] / nf };
      }
    },
  };
  return at;
}

/** The group an application node counts in, or undefined for V8's own objects. */
function groupOf(h, i) {
  const type = h.type(i);
  if (!APPLICATION_TYPES.has(type)) return undefined;
  const rawName = h.name(i);
  if (rawName.startsWith('system /') || (type === 'array' && rawName.startsWith('('))) return undefined;
  return type.endsWith('string') ? '(strings)' : type === 'number' ? '(heap numbers)' : `${type} ${rawName || '(anonymous)'}`;
}

function summarize(h) {
  const groups = new Map();
  for (let i = 0; i < h.count; i++) {
    const name = groupOf(h, i);
    if (name === undefined) continue;
    const group = groups.get(name) ?? { count: 0, bytes: 0 };
    group.count++;
    group.bytes += h.size(i);
    groups.set(name, group);
  }
  return groups;
}

function edgeNamed(h, i, name) {
  for (const e of h.edges(i)) if (e.name === name) return e.to;
  return undefined;
}

/** The text a key string starts with: a concatenated string's leftmost part. */
function leadingText(h, i) {
  for (let depth = 0; depth < 32 && h.type(i) === 'concatenated string'; depth++) i = edgeNamed(h, i, 'first') ?? i;
  return h.type(i) === 'string' ? h.name(i) : '';
}

/**
 * Entries and bytes of the in-memory session cache by namespace, or undefined when the
 * snapshot has no `MemoryCacheStore` (the Redis provider keeps its entries outside the heap).
 */
function storeNamespaces(h) {
  let store;
  for (let i = 0; i < h.count && store === undefined; i++) if (h.type(i) === 'object' && h.name(i) === 'MemoryCacheStore') store = i;
  const map = store === undefined ? undefined : edgeNamed(h, store, 'entries');
  const table = map === undefined ? undefined : edgeNamed(h, map, 'table');
  if (table === undefined) return undefined;
  // The Map's table holds each entry as key, value, chain; the chain and the bucket heads
  // are small integers, which a snapshot has no edges for.
  const slots = [...h.edges(table)].filter((e) => e.type === 'internal' && /^\d+$/.test(e.name)).map((e) => ({ index: Number(e.name), to: e.to }));
  slots.sort((a, b) => a.index - b.index);
  const seen = new Uint8Array(h.count);
  const weigh = (start) => {
    let bytes = 0;
    const stack = [[start, 0]];
    while (stack.length > 0) {
      const [i, depth] = stack.pop();
      if (seen[i]) continue;
      seen[i] = 1;
      if (groupOf(h, i) !== undefined) bytes += h.size(i);
      if (depth >= ENTRY_DEPTH) continue;
      for (const e of h.edges(i)) {
        if (e.type === 'weak' || e.type === 'shortcut' || SKIPPED_EDGES.has(e.name)) continue;
        if (h.type(e.to) === 'code' || h.type(e.to) === 'closure') continue;
        stack.push([e.to, depth + 1]);
      }
    }
    return bytes;
  };
  const namespaces = {};
  let entries = 0;
  for (let s = 0; s + 1 < slots.length; s++) {
    const key = slots[s];
    const value = slots[s + 1];
    if (!h.type(key.to).endsWith('string') || value.index !== key.index + 1) continue;
    const text = leadingText(h, key.to);
    const ns = text.includes(':') ? text.slice(0, text.indexOf(':')) : text || '(unknown)';
    const group = (namespaces[ns] ??= { entries: 0, bytes: 0 });
    group.entries++;
    group.bytes += weigh(key.to) + weigh(value.to);
    entries++;
    s++;
  }
  const tableBytes = h.size(table);
  for (const group of Object.values(namespaces)) group.bytes += entries === 0 ? 0 : (tableBytes * group.entries) / entries;
  return namespaces;
}

/**
 * Growth of application objects from `before` to `after`: total bytes and count,
 * the groups that grew most, and (in memory) the session cache's entries and bytes
 * by namespace in each snapshot.
 */
export function heapDiff(before, after, top = 5) {
  const [h1, h2] = [indexSnapshot(before), indexSnapshot(after)];
  const a = summarize(h1);
  const b = summarize(h2);
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
    store: { before: storeNamespaces(h1), after: storeNamespaces(h2) },
  };
}
