-- D40: every write of a Product's stock first ends the Product's reservations past their expiry, and every reading
-- of a unit or of a Product's stock counts what such reservations hold as free. They looked for them through indexes
-- of all reservations ever made, ended ones included, or of the due reservations of every Product:
-- - a writer's check read every due reservation of the whole warehouse (reservation_life_expiry_idx, then the
--   Product as a filter) when the Product had a history of ended reservations: 1,540 rows to find a Product's 20 in
--   test/reservations/due-of-products-plans.test.ts, tens of thousands for such a Product's every allocation and move
--   during a mass expiry; or every reservation the Product ever had (reservation_life_product_idx); a stock reading
--   of one Product read every due reservation, or hashed every active part;
-- - a unit's check walked every part any reservation ever held on the unit (reservation_packaging_unit_idx, kept
--   for the foreign key), a number that only grows on a pallet picked from for months.
-- Each index below holds only what is still active, so a check reads the rows it is about. A Product's check compares
-- `(product_id, expires_at)` as a row, which only reservation_life_product_active_idx serves; the expiry work's index
-- is made again with `expires_at IS NOT NULL` in its condition, which such a row comparison does not imply, so the
-- planner cannot scan all of it (every due reservation) for one Product, as it did with statistics up to date and
-- few Products reserved. A reservation without an expiry never needed to be in it.
--
-- Cost: each build reads its table once under a SHARE lock (reservations wait, reads go on). With millions of
-- reservations an operator can build them beforehand, while the service runs, with the statements below written
-- CREATE INDEX CONCURRENTLY; this migration then finds them and builds nothing.
CREATE INDEX IF NOT EXISTS reservation_life_product_active_idx ON reservation_life (product_id, expires_at) WHERE state = 'ACTIVE';
CREATE INDEX IF NOT EXISTS reservation_active_unit_idx ON reservation (packaging_unit_id) WHERE released_at IS NULL;
CREATE INDEX IF NOT EXISTS reservation_life_due_idx ON reservation_life (expires_at)
  WHERE state = 'ACTIVE' AND expires_at IS NOT NULL;
DROP INDEX IF EXISTS reservation_life_expiry_idx;
