// bench/duckdb/run.mjs — DuckDB as a peer of `shape stream-profile FILE`
// (issue 19): what a data engineer reaches for to profile a dumped topic.
//
// Why: the page should say how shape's file profile compares with DuckDB's
// SUMMARIZE on the same JSON lines file, on the same 2 cores, timed the same
// way (the whole process, from outside, by bench/lib.sh's measure).
// How: @duckdb/node-api (its engine bundled; pinned by package-lock.json
// beside this file, installed by scripts/install-deps with `npm ci`), an
// in-memory database with DuckDB's default threads (one per core), then
//   summarize FILE        SUMMARIZE SELECT * FROM read_json('FILE')
//   parquet FILE OUT      COPY (SELECT * FROM read_json('FILE')) TO 'OUT' (FORMAT parquet)
//   --version             prints DuckDB's version (bench/lib.sh: is the peer there?)
// and prints one key=value line: messages (the rows DuckDB read: SUMMARIZE's
// `count`, COPY's row count — the harness checks it), columns, query_s (the
// query alone, inside the process), duckdb (version).
import { DuckDBInstance } from '@duckdb/node-api';

const [mode, file, out] = process.argv.slice(2);
const q = (s) => "'" + String(s).replace(/'/g, "''") + "'";
const t0 = process.hrtime.bigint();
const instance = await DuckDBInstance.create(':memory:');
const con = await instance.connect();
const version = (await (await con.run('SELECT version() AS v')).getRowObjects())[0].v;
if (mode === '--version') {
    console.log(`duckdb=${version}`);
    process.exit(0);
}
let messages, columns;
const tq = process.hrtime.bigint();
if (mode === 'summarize' && file) {
    const rows = await (await con.run(`SUMMARIZE SELECT * FROM read_json(${q(file)})`)).getRowObjects();
    columns = rows.length;
    messages = rows.length ? Number(rows[0].count) : 0;
} else if (mode === 'parquet' && file && out) {
    const r = await con.run(`COPY (SELECT * FROM read_json(${q(file)})) TO ${q(out)} (FORMAT parquet)`);
    messages = Number(r.rowsChanged);
    columns = '';
} else {
    console.error('usage: run.mjs summarize FILE | parquet FILE OUT | --version');
    process.exit(2);
}
const query_s = Number(process.hrtime.bigint() - tq) / 1e9;
const total_s = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(`messages=${messages} columns=${columns} query_s=${query_s.toFixed(6)} seconds=${total_s.toFixed(6)} duckdb=${version}`);
