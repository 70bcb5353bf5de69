-- What the stock-level triggers (migration 0010) cost a quantity move's split, in one backend's CPU time
-- (bench/notes.md, "Issue 38 item 1: where scenario 6's time goes"). Run with psql against a THROWAWAY database
-- seeded like scenario 6 (bench/seed.ts: seedMasterData, seedProducts M 1-200, seedStock(mixedStock)), once as it
-- is and once after
--   ALTER TABLE packaging_unit DISABLE TRIGGER stock_level_insert, DISABLE TRIGGER stock_level_update;
-- alternately; the difference is the triggers' cost. Never disable them in a database that keeps its data.
-- 3000 splits of 1 PC from a unit of Product p into the other LoadUnit of p, each its own transaction, as
-- reduce-and-insert-split does (one statement: an UPDATE of the source and an INSERT of the split).
SET synchronous_commit = off;
SELECT split_part(pg_read_file('/proc/self/stat'), ' ', 14)::int
     + split_part(pg_read_file('/proc/self/stat'), ' ', 15)::int AS t0 \gset
DO $$
DECLARE p int; n int;
BEGIN
  FOR i IN 1..3000 LOOP
    p := 1 + (i % 200);
    WITH src AS MATERIALIZED (SELECT pu.id, pu.load_unit_id FROM packaging_unit pu
                                WHERE pu.product_id = p AND pu.qty_magnitude > 3 ORDER BY pu.id LIMIT 1
                                  FOR UPDATE OF pu),
         tgt AS (SELECT lu.id FROM load_unit lu, src WHERE lu.product_id = p AND lu.id <> src.load_unit_id LIMIT 1),
         source AS (UPDATE packaging_unit SET qty_magnitude = qty_magnitude - 1, ol = ol + 1, last_modified_dt = now()
                     WHERE id = (SELECT id FROM src) RETURNING *),
         split AS (INSERT INTO packaging_unit (product_id, qty_magnitude, qty_code, load_unit_id, parent_id, state,
                                               reserved_base)
                   SELECT product_id, 1, qty_code, (SELECT id FROM tgt), id, state, 0
                     FROM packaging_unit WHERE id = (SELECT id FROM src) RETURNING *)
    SELECT count(*) INTO n FROM (SELECT id FROM source UNION ALL SELECT id FROM split) x;
    COMMIT;
  END LOOP;
END $$;
-- CPU ms per split (utime + stime of this backend, 10 ms ticks).
SELECT (split_part(pg_read_file('/proc/self/stat'), ' ', 14)::int
      + split_part(pg_read_file('/proc/self/stat'), ' ', 15)::int - :t0) * 10.0 / 3000 AS cpu_ms_per_split;
