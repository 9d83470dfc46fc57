// parquet_matches_profile.mjs FILE.parquet PROFILE.json [TABLE] — DuckDB reads a
// Parquet file written by `shape stream-read --format parquet`, and its own
// aggregates equal the exact figures of shape's profile of the same input
// (`shape stream-profile`, table TABLE, default "stream").
//
// Why an independent reader: the Parquet writer (Thrift footer, pages, levels,
// ZSTD, statistics) is ours; DuckDB's reader is not. How: count(*) is the
// table's rows; per column count(col) is count - null_count; numbers: min and
// max exactly (finite values; ±inf and NaN counted apart), and sum(col) equals
// mean × finite_count (the profile keeps the mean, not the sum: to 1e-9 of the
// largest magnitude); text: min, max, and the shortest and longest length;
// bools: the true and false counts; times: min and max in µs. From the file's
// own footer (parquet_metadata): every column chunk is ZSTD (unless
// --uncompressed) with statistics whose null counts add up to the profile's and
// whose min/max bound DuckDB's; with --dictionary some chunks carry a
// dictionary page and RLE_DICTIONARY, without it none does. Prints "ok: ..." or every difference (exit 1).
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const [file, profilePath, tableName = 'stream', ...flags] = process.argv.slice(2);
// Integer bounds beyond 2^53 stay exact: quoted before parsing.
const text = readFileSync(profilePath, 'utf8').replace(/"(min|max)": (-?\d{16,})/g, '"$1": "$2"');
const table = JSON.parse(text).tables[tableName];
const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
const q = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
const src = `read_parquet('${file.replace(/'/g, "''")}')`;
const id = (n) => `"${n.replace(/"/g, '""')}"`;
const bad = [];
const expect = (what, got, want) => { if (String(got) !== String(want)) bad.push(`${what}: DuckDB ${got}, profile ${want}`); };

const [{ n }] = await q(`select count(*)::varchar as n from ${src}`);
expect('count(*)', n, table.rows);
let checked = 0;
for (const c of table.columns) {
  const col = id(c.name);
  const [r] = await q(`select count(${col})::varchar as n from ${src}`);
  expect(`${c.name} count`, r.n, c.count - c.null_count);
  if (c.kind === 'int' || c.kind === 'float') {
    const fin = c.kind === 'float' ? `filter (where isfinite(${col}))` : '';
    const [s] = await q(`select min(${col}) ${fin} as lo, max(${col}) ${fin} as hi, sum(${col}::double) ${fin} as sum,
      (min(${col}) ${fin})::varchar as lo_text, (max(${col}) ${fin})::varchar as hi_text,
      ${c.kind === 'float' ? `count(*) filter (where isinf(${col}) and ${col} > 0) as pinf, count(*) filter (where isinf(${col}) and ${col} < 0) as ninf, count(*) filter (where isnan(${col})) as nan` : '0 as pinf, 0 as ninf, 0 as nan'}
      from ${src}`);
    if (c.kind === 'int') {
      expect(`${c.name} min`, s.lo_text, c.min === null ? null : BigInt(c.min).toString());
      expect(`${c.name} max`, s.hi_text, c.max === null ? null : BigInt(c.max).toString());
    } else {
      expect(`${c.name} min`, s.lo === null ? null : Number(s.lo), c.min);
      expect(`${c.name} max`, s.hi === null ? null : Number(s.hi), c.max);
      expect(`${c.name} +inf`, s.pinf, c.pos_inf_count);
      expect(`${c.name} -inf`, s.ninf, c.neg_inf_count);
      expect(`${c.name} NaN`, s.nan, c.nan_count);
    }
    if (c.finite_count > 0) {
      const want = c.mean * c.finite_count, got = Number(s.sum);
      const scale = Math.max(Math.abs(Number(c.min)), Math.abs(Number(c.max)), 1) * c.finite_count;
      if (!(Math.abs(got - want) <= 1e-9 * scale)) bad.push(`${c.name} sum: DuckDB ${got}, profile mean x count ${want}`);
    }
  } else if (c.kind === 'text') {
    const [s] = await q(`select min(${col}) as lo, max(${col}) as hi, min(length(${col})) as lmin, max(length(${col})) as lmax from ${src}`);
    expect(`${c.name} min`, JSON.stringify(s.lo), JSON.stringify(c.min));
    expect(`${c.name} max`, JSON.stringify(s.hi), JSON.stringify(c.max));
    if (c.length && c.length.count > 0) {
      expect(`${c.name} shortest`, s.lmin, c.length.min);
      expect(`${c.name} longest`, s.lmax, c.length.max);
    }
  } else if (c.kind === 'bool') {
    const [s] = await q(`select count(*) filter (where ${col}) as t, count(*) filter (where not ${col}) as f from ${src}`);
    expect(`${c.name} true`, s.t, c.true_count);
    expect(`${c.name} false`, s.f, c.false_count);
  } else if (c.kind === 'temporal') {
    const [s] = await q(`select epoch_us(min(${col}))::varchar as lo, epoch_us(max(${col}))::varchar as hi from ${src}`);
    expect(`${c.name} min`, s.lo, c.min);
    expect(`${c.name} max`, s.hi, c.max);
  }
  checked++;
}
// The file's own column chunk metadata.
const chunks = await q(`select path_in_schema, compression, stats_null_count::varchar as nulls,
  stats_min_value as lo, stats_max_value as hi, encodings, dictionary_page_offset::varchar as dict
  from parquet_metadata('${file.replace(/'/g, "''")}')`);
const want = flags.includes('--uncompressed') ? 'UNCOMPRESSED' : 'ZSTD';
// --dictionary: some chunks are dictionary-encoded (their encodings say so); without it, none is.
const dict = chunks.filter((ch) => ch.dict !== null && String(ch.encodings).includes('RLE_DICTIONARY')).length;
if (flags.includes('--dictionary') ? dict === 0 : dict !== 0) bad.push(`${dict} dictionary-encoded column chunks`);
for (const ch of chunks) if (ch.compression !== want) bad.push(`${ch.path_in_schema}: compression ${ch.compression}, not ${want}`);
for (const c of table.columns) {
  if (c.kind === 'other') continue; // maps and binary: no flat statistics to compare
  const mine = chunks.filter((ch) => ch.path_in_schema === c.name);
  const nulls = mine.reduce((a, ch) => a + Number(ch.nulls), 0);
  expect(`${c.name} statistics null_count`, nulls, c.null_count);
}
if (bad.length) {
  for (const b of bad) console.error(`FAIL: ${b}`);
  process.exit(1);
}
console.log(`ok: ${n} rows, ${checked} columns, ${chunks.length} column chunks agree with the profile` +
  (dict ? ` (${dict} dictionary-encoded)` : ''));
