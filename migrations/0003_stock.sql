-- Stock (spec part 2 LoadUnit / PackagingUnit, D16-D24). Quantities keep the unit they were given in, and
-- carry their exact amount in the kind's smallest unit (PC or MG) for sums, comparisons and the invariants.

-- The one conversion table on the database side; src/units/units.ts holds the same factors.
CREATE FUNCTION unit_factor(code text) RETURNS numeric
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN CASE code
    WHEN 'PC' THEN 1 WHEN 'DOZ' THEN 12
    WHEN 'MG' THEN 1 WHEN 'G' THEN 1000 WHEN 'KG' THEN 1000000 WHEN 'T' THEN 1000000000
  END;

CREATE FUNCTION unit_kind(code text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN CASE WHEN code IN ('PC', 'DOZ') THEN 'Piece' WHEN code IN ('MG', 'G', 'KG', 'T') THEN 'Weight' END;

CREATE TABLE load_unit (
  id                bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  p_key             uuid        NOT NULL DEFAULT gen_random_uuid() UNIQUE,
  transport_unit_id bigint      NOT NULL REFERENCES transport_unit (id),
  physical_position text        NOT NULL CHECK (btrim(physical_position) <> ''),
  label             text,
  load_unit_type    text        NOT NULL CHECK (btrim(load_unit_type) <> ''),
  locked            boolean     NOT NULL DEFAULT false,
  -- The Product the LoadUnit is assigned to (lu-putproductinto) or was first filled with.
  product_id        bigint      REFERENCES product (id),
  dimension         json,
  ol                integer     NOT NULL DEFAULT 0,
  create_dt         timestamptz NOT NULL DEFAULT now(),
  last_modified_dt  timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT load_unit_position_unique UNIQUE (transport_unit_id, physical_position)
);
CREATE INDEX load_unit_product_id_idx ON load_unit (product_id);

CREATE TABLE packaging_unit (
  id                bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  p_key             uuid        NOT NULL DEFAULT gen_random_uuid() UNIQUE,
  product_id        bigint      NOT NULL REFERENCES product (id),
  qty_magnitude     numeric     NOT NULL,
  qty_code          text        NOT NULL CHECK (unit_factor(qty_code) IS NOT NULL),
  qty_base          numeric     GENERATED ALWAYS AS (qty_magnitude * unit_factor(qty_code)) STORED,
  -- Sum of the active reservations on this unit, kept in the same transaction as the reservation rows.
  reserved_base     numeric     NOT NULL DEFAULT 0,
  state             text        NOT NULL DEFAULT 'AVAILABLE' CHECK (state IN ('AVAILABLE', 'LOCKED', 'QC_LOCKED')),
  load_unit_id      bigint      REFERENCES load_unit (id),
  location_id       bigint      REFERENCES location (id),
  -- The unit this one was split from by a partial move or a problem report.
  parent_id         bigint      REFERENCES packaging_unit (id) ON DELETE SET NULL,
  dimension         json,
  weight_magnitude  numeric,
  weight_code       text        CHECK (weight_code IS NULL OR unit_kind(weight_code) = 'Weight'),
  distribution      json,
  physical_position text,
  serial_number     text,
  expires_at        timestamptz,
  labels            text[],
  details           json,
  message_no        text,
  message_text      text,
  ol                integer     NOT NULL DEFAULT 0,
  create_dt         timestamptz NOT NULL DEFAULT now(),
  last_modified_dt  timestamptz NOT NULL DEFAULT now(),
  -- The invariants the services rely on; the database refuses any write that would break them.
  CONSTRAINT packaging_unit_one_holder CHECK ((load_unit_id IS NULL) <> (location_id IS NULL)),
  CONSTRAINT packaging_unit_quantity_not_negative CHECK (qty_magnitude >= 0),
  CONSTRAINT packaging_unit_reserved_within_quantity CHECK (reserved_base >= 0 AND reserved_base <= qty_base)
);
CREATE INDEX packaging_unit_load_unit_idx ON packaging_unit (load_unit_id) WHERE load_unit_id IS NOT NULL;
CREATE INDEX packaging_unit_location_idx ON packaging_unit (location_id) WHERE location_id IS NOT NULL;
CREATE INDEX packaging_unit_product_idx ON packaging_unit (product_id, create_dt, id);
CREATE INDEX packaging_unit_parent_idx ON packaging_unit (parent_id) WHERE parent_id IS NOT NULL;
-- Allocation candidates in FEFO/FIFO order; a unit leaves this index once it is fully reserved.
CREATE INDEX packaging_unit_allocatable_idx ON packaging_unit (product_id, expires_at ASC NULLS LAST, create_dt, id)
  WHERE load_unit_id IS NOT NULL AND state = 'AVAILABLE' AND qty_base > reserved_base;

-- One row per unit an allocation reserved from; a request's rows share its reservation_id (D23).
CREATE TABLE reservation (
  id                bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  reservation_id    uuid        NOT NULL,
  -- Released reservations outlive a deleted unit (active ones prevent its deletion), so a release stays idempotent.
  packaging_unit_id bigint      REFERENCES packaging_unit (id) ON DELETE SET NULL,
  qty_base          numeric     NOT NULL CHECK (qty_base > 0),
  actor             text        NOT NULL,
  request_id        text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  released_at       timestamptz
);
CREATE INDEX reservation_reservation_id_idx ON reservation (reservation_id);
CREATE INDEX reservation_active_unit_idx ON reservation (packaging_unit_id) WHERE released_at IS NULL;

-- The append-only movement ledger (D24): one row per stock change, written in the changing transaction.
-- Units are referenced by key, not foreign key, so their history outlives them.
CREATE TABLE stock_movement (
  id                  bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  packaging_unit_pkey uuid        NOT NULL,
  product_id          bigint      NOT NULL,
  kind                text        NOT NULL CHECK (kind IN ('CREATE', 'MOVE', 'SPLIT', 'DELETE', 'RESERVE', 'RELEASE',
                                                         'LOCK', 'UNLOCK')),
  -- Amounts in the kind's smallest unit (PC or MG): a unit's own unit may change when a split leaves a remainder.
  base_code           text        NOT NULL CHECK (base_code IN ('PC', 'MG')),
  qty_before          numeric     NOT NULL,
  qty_after           numeric     NOT NULL,
  reserved_before     numeric     NOT NULL,
  reserved_after      numeric     NOT NULL,
  from_ref            json,
  to_ref              json,
  reservation_id      uuid,
  actor               text        NOT NULL,
  request_id          text,
  occurred_at         timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX stock_movement_unit_idx ON stock_movement (packaging_unit_pkey, id);

CREATE FUNCTION refuse_ledger_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'stock_movement is append-only' USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER stock_movement_append_only BEFORE UPDATE OR DELETE ON stock_movement
  FOR EACH ROW EXECUTE FUNCTION refuse_ledger_change();
