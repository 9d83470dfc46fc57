// arrow_matches_jsonl.mjs STREAM.arrow ROWS.jsonl — the Arrow JS library reads
// an Arrow IPC stream written by `shape stream-read --format arrow`, and every
// value of every row must equal what `shape stream-read` printed as JSON for
// the same row (ROWS.jsonl, the default --format jsonl over the same input).
//
// Why an independent reader: the IPC writer is ours (no Arrow C++ library in
// Debian 12); apache-arrow parses the FlatBuffers metadata and the buffers
// with its own code. How: each JSON line is split into its members' raw text
// (kept exact, so 64-bit integers and member order survive), and each Arrow
// value is compared by the printer's rules: int64 as decimal text, floats
// numerically (non-finite printed as null), strings, bools, timestamps as
// ISO-8601 with 'Z' compared in exact integer units, binary as base64, maps
// as ordered objects of base64 values. Prints "ok: N rows, M columns, B
// batches" or the first difference, and exits 1 on it.
import { readFileSync } from 'node:fs';
import { RecordBatchReader, Type } from 'apache-arrow';

const [streamPath, rowsPath] = process.argv.slice(2);
const lines = readFileSync(rowsPath, 'utf8').split('\n').filter((l) => l.length > 0);

// The members of the JSON object text at s[i] as [key, raw value text], in order.
function members(s) {
  const out = [];
  let i = 0;
  const ws = () => { while (' \t\r\n'.includes(s[i])) i++; };
  const str = () => { const b = i++; while (s[i] !== '"') i += s[i] === '\\' ? 2 : 1; i++; return s.slice(b, i); };
  const value = () => {
    const b = i;
    if (s[i] === '"') { str(); return s.slice(b, i); }
    if (s[i] === '{' || s[i] === '[') {
      let depth = 0;
      do {
        if (s[i] === '"') { str(); continue; }
        if (s[i] === '{' || s[i] === '[') depth++;
        if (s[i] === '}' || s[i] === ']') depth--;
        i++;
      } while (depth > 0);
      return s.slice(b, i);
    }
    while (i < s.length && !',}] \t\r\n'.includes(s[i])) i++;
    return s.slice(b, i);
  };
  ws(); i++; ws();
  while (s[i] !== '}') {
    const k = JSON.parse(str()); ws(); i++; ws();
    out.push([k, value()]); ws();
    if (s[i] === ',') { i++; ws(); }
  }
  return out;
}

const unitsPerSecond = [1n, 1000n, 1000000n, 1000000000n];
// "YYYY-MM-DDTHH:MM:SS[.f]Z" as integer units of the type.
function isoToUnits(text, unit) {
  const m = /^(-?\d+)-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?Z$/.exec(text);
  if (!m) throw new Error(`not a timestamp: ${text}`);
  const d = new Date(0);
  d.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  d.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), 0);
  const frac = (m[7] || '').padEnd(9, '0');
  const perSecond = unitsPerSecond[unit];
  return BigInt(d.getTime() / 1000) * perSecond + BigInt(frac) / (1000000000n / perSecond);
}

function same(field, vec, row, raw) {
  const t = field.type;
  const v = vec.get(row);
  if (raw === 'null') {
    if (v === null) return true;
    return t.typeId === Type.Float && !Number.isFinite(v); // the printer's rule for NaN, ±inf
  }
  if (v === null) return false;
  switch (t.typeId) {
    case Type.Int: return BigInt(v).toString() === raw;
    case Type.Float: return Number.isFinite(v) && JSON.parse(raw) === v;
    case Type.Utf8: case Type.Bool: return JSON.parse(raw) === v;
    case Type.Binary: return JSON.parse(raw) === Buffer.from(v).toString('base64');
    case Type.Timestamp: {
      // Exact units from the column's int64 values, not the reader's float milliseconds.
      let k = row, chunk = 0;
      while (k >= vec.data[chunk].length) k -= vec.data[chunk++].length;
      const d = vec.data[chunk];
      return d.values[d.offset + k] === isoToUnits(JSON.parse(raw), t.unit);
    }
    case Type.Map: {
      const want = members(raw);
      const got = [...v];
      if (want.length !== got.length) return false;
      return want.every(([k, r], j) => k === got[j][0] &&
        (r === 'null' ? got[j][1] === null : got[j][1] !== null && JSON.parse(r) === Buffer.from(got[j][1]).toString('base64')));
    }
    case Type.Null: return false;
    default: throw new Error(`column ${field.name}: type ${t} not checked by this oracle`);
  }
}

const reader = RecordBatchReader.from(readFileSync(streamPath));
let row = 0, batches = 0, columns = 0;
for (const batch of reader) {
  batches++;
  const fields = batch.schema.fields;
  columns = fields.length;
  for (let r = 0; r < batch.numRows; r++, row++) {
    if (row >= lines.length) { console.error(`FAIL: the stream has more rows than the ${lines.length} JSON lines`); process.exit(1); }
    const m = members(lines[row]);
    if (m.length !== fields.length || m.some(([k], j) => k !== fields[j].name)) {
      console.error(`FAIL: row ${row}: columns ${fields.map((f) => f.name)} but the JSON line has ${m.map(([k]) => k)}`);
      process.exit(1);
    }
    for (let j = 0; j < fields.length; j++) {
      if (!same(fields[j], batch.getChildAt(j), r, m[j][1])) {
        const v = batch.getChildAt(j).get(r);
        console.error(`FAIL: row ${row} column ${fields[j].name} (${fields[j].type}): Arrow ${typeof v === 'bigint' ? v : JSON.stringify(v)} but JSON ${m[j][1]}`);
        process.exit(1);
      }
    }
  }
}
if (row !== lines.length) { console.error(`FAIL: the stream has ${row} rows, the JSON lines ${lines.length}`); process.exit(1); }
console.log(`ok: ${row} rows, ${columns} columns, ${batches} batches`);
