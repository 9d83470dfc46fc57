// parquet_counts_jsonl.mjs FILE.parquet ROWS.jsonl — DuckDB reads a Parquet
// file and finds the rows and, per column, the non-null values that the same
// rows printed as JSON lines hold (a float column: its finite values, since
// the printer writes NaN and ±inf as null). For random batches, where no
// profile is at hand: the reader must accept every file and lose nothing.
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const [file, rowsPath] = process.argv.slice(2);
const lines = readFileSync(rowsPath, 'utf8').split('\n').filter((l) => l.length > 0);
const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
const src = `read_parquet('${file.replace(/'/g, "''")}')`;
const q = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
const cols = await q(`describe select * from ${src}`);
const bad = [];
const [{ n }] = await q(`select count(*)::int as n from ${src}`);
if (n !== lines.length) bad.push(`count(*) ${n}, JSON lines ${lines.length}`);
for (const c of cols) {
  const name = c.column_name, id = `"${name.replace(/"/g, '""')}"`;
  const want = lines.reduce((a, l) => a + (JSON.parse(l)[name] !== null ? 1 : 0), 0);
  const expr = c.column_type === 'DOUBLE' ? `count(*) filter (where isfinite(${id}))` : `count(${id})`;
  const [{ got }] = await q(`select ${expr}::int as got from ${src}`);
  if (got !== want) bad.push(`${name} (${c.column_type}): ${got} values, JSON lines ${want}`);
}
if (bad.length) { for (const b of bad) console.error(`FAIL: ${b}`); process.exit(1); }
console.log(`ok: ${n} rows, ${cols.length} columns`);
