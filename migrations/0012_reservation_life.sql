-- The life of a reservation (D32): an order reference, an expiry, picking and goods issue.
--
-- `reservation` keeps one row per unit a reservation holds (its parts); a part is active while released_at is
-- NULL, whatever ended it (release, expiry, issue), so reserved_base stays the sum of a unit's active parts.
-- `reservation_life` is the reservation itself: one row per reservation id, its state and what a client asked for.
CREATE TABLE reservation_life (
  -- The list's page cursor: newest first is id descending.
  id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  reservation_id uuid        NOT NULL UNIQUE,
  product_id     bigint      NOT NULL REFERENCES product (id),
  -- What the allocation reserved, in the kind's smallest unit; it stays as it was when parts are picked or end.
  qty_base       numeric     NOT NULL CHECK (qty_base > 0),
  state          text        NOT NULL DEFAULT 'ACTIVE' CHECK (state IN ('ACTIVE', 'RELEASED', 'EXPIRED', 'ISSUED')),
  external_ref   text        CHECK (char_length(external_ref) BETWEEN 1 AND 255),
  expires_at     timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now(),
  ended_at       timestamptz,
  CONSTRAINT reservation_life_ended_when_not_active CHECK ((state = 'ACTIVE') = (ended_at IS NULL))
);
CREATE INDEX reservation_life_product_idx ON reservation_life (product_id, id);
CREATE INDEX reservation_life_external_ref_idx ON reservation_life (external_ref, id) WHERE external_ref IS NOT NULL;
-- What the expiry worker looks for every second: only active reservations with an expiry are indexed.
CREATE INDEX reservation_life_expiry_idx ON reservation_life (expires_at) WHERE state = 'ACTIVE';

-- A part names its unit by key as well: an issued reservation outlives the units its goods left in, and a
-- reservation is read with the units it held.
ALTER TABLE reservation
  ADD COLUMN packaging_unit_pkey uuid,
  -- The part was picked to where its unit now is (D32): its quantity counts as picked.
  ADD COLUMN picked boolean NOT NULL DEFAULT false;
UPDATE reservation r SET packaging_unit_pkey = pu.p_key FROM packaging_unit pu WHERE pu.id = r.packaging_unit_id;
-- A released part whose unit was deleted since: its unit's key from the reservation's RESERVE ledger rows of units
-- that no longer exist, paired in the order both were written (one statement wrote both, in the same order).
WITH orphan AS (
  SELECT id, reservation_id, row_number() OVER (PARTITION BY reservation_id ORDER BY id) AS n
    FROM reservation WHERE packaging_unit_pkey IS NULL
), gone AS (
  SELECT m.reservation_id, m.packaging_unit_pkey,
         row_number() OVER (PARTITION BY m.reservation_id ORDER BY m.id) AS n
    FROM stock_movement m
   WHERE m.kind = 'RESERVE' AND m.reservation_id IN (SELECT reservation_id FROM orphan)
     AND NOT EXISTS (SELECT 1 FROM packaging_unit pu WHERE pu.p_key = m.packaging_unit_pkey)
)
UPDATE reservation r SET packaging_unit_pkey = gone.packaging_unit_pkey
  FROM orphan JOIN gone ON gone.reservation_id = orphan.reservation_id AND gone.n = orphan.n
 WHERE r.id = orphan.id;
DELETE FROM reservation WHERE packaging_unit_pkey IS NULL AND released_at IS NOT NULL;
ALTER TABLE reservation ALTER COLUMN packaging_unit_pkey SET NOT NULL;

-- Reservations made before this migration: active while a part is, released otherwise.
INSERT INTO reservation_life (reservation_id, product_id, qty_base, state, created_at, ended_at)
SELECT r.reservation_id,
       (SELECT m.product_id FROM stock_movement m WHERE m.reservation_id = r.reservation_id LIMIT 1),
       sum(r.qty_base),
       CASE WHEN bool_or(r.released_at IS NULL) THEN 'ACTIVE' ELSE 'RELEASED' END,
       min(r.created_at),
       CASE WHEN bool_or(r.released_at IS NULL) THEN NULL ELSE max(r.released_at) END
  FROM reservation r
 GROUP BY r.reservation_id
 ORDER BY min(r.id);
ALTER TABLE reservation
  ADD CONSTRAINT reservation_life_fk FOREIGN KEY (reservation_id) REFERENCES reservation_life (reservation_id);

-- Picking, goods issue and expiry are stock changes of their own in the ledger (D24, D32).
ALTER TABLE stock_movement DROP CONSTRAINT stock_movement_kind_check;
ALTER TABLE stock_movement ADD CONSTRAINT stock_movement_kind_check
  CHECK (kind IN ('CREATE', 'MOVE', 'SPLIT', 'DELETE', 'RESERVE', 'RELEASE', 'LOCK', 'UNLOCK', 'PICK', 'ISSUE',
                  'EXPIRE'));
