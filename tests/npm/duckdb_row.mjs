// duckdb_row.mjs FILE.parquet SQL — run SQL in DuckDB with {f} standing for
// read_parquet(FILE) and print its first row as compact JSON (integers cast
// by the query). For tests that ask one precise question of a Parquet file.
import { DuckDBInstance } from '@duckdb/node-api';
const [file, sql] = process.argv.slice(2);
const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
const rows = (await con.runAndReadAll(sql.replaceAll('{f}', `read_parquet('${file.replace(/'/g, "''")}')`))).getRowObjectsJson();
console.log(JSON.stringify(rows[0] ?? null));
