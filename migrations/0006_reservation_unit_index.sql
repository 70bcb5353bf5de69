-- Deleting a packaging unit makes PostgreSQL look for its reservations (ON DELETE SET NULL). The only index on
-- reservation.packaging_unit_id was partial (active reservations), which that lookup cannot use, so every unit
-- delete scanned the whole reservation table, and released rows are kept for good. One full index serves the
-- foreign key and the lookups of active reservations alike.
DROP INDEX reservation_active_unit_idx;
CREATE INDEX reservation_packaging_unit_idx ON reservation (packaging_unit_id);
