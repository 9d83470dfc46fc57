import { DuckDBInstance } from '@duckdb/node-api';
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const f = `read_parquet('${process.argv[2]}')`;
const r = (await c.runAndReadAll(`select count(*)::int as n,
  count(*) filter (where _shape_key = 'k7\xFF\xFE'::blob)::int as k7,
  count(*) filter (where map_extract(_shape_headers, 'trace')[1] = 'abc'::blob
                     and map_extract(_shape_headers, 'bytes')[1] = 'é1'::blob
                     and cardinality(_shape_headers) = 2)::int as headed,
  count(*) filter (where cardinality(_shape_headers) = 0 and _shape_key is null)::int as bare,
  count(distinct _shape_partition)::int as partitions,
  count(*) filter (where _shape_timestamp is not null)::int as timed,
  sum(n)::int as total from ${f}`)).getRowObjectsJson()[0];
console.log(JSON.stringify(r));
