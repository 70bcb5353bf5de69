-- Reserving and releasing change reserved_base only. While reserved_base was in the allocatable index's
-- predicate, every such update had to add an entry to each of packaging_unit's indexes; with no indexed
-- column touched PostgreSQL updates the row in place (a HOT update), given room on its page, which the fill
-- factor keeps. Fully reserved units now stay in the index; allocation skips them by the row's own check.
DROP INDEX packaging_unit_allocatable_idx;
CREATE INDEX packaging_unit_allocatable_idx ON packaging_unit (product_id, expires_at ASC NULLS LAST, create_dt, id)
  WHERE load_unit_id IS NOT NULL AND state = 'AVAILABLE';
ALTER TABLE packaging_unit SET (fillfactor = 85);
