-- Master data kept as replicas (D14, D15): location groups, locations and transport units. They are managed
-- elsewhere; LoadUnits, PackagingUnits and allocation reference location.id and transport_unit.id.

CREATE TABLE location_group (
  id               bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  p_key            uuid        NOT NULL DEFAULT gen_random_uuid() UNIQUE,
  name             text        NOT NULL CHECK (btrim(name) <> ''),
  parent_id        bigint      REFERENCES location_group (id),
  ol               integer     NOT NULL DEFAULT 0,
  create_dt        timestamptz NOT NULL DEFAULT now(),
  last_modified_dt timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT location_group_name_unique UNIQUE (name),
  -- Longer cycles are refused by the service, which serialises group writes to check them.
  CONSTRAINT location_group_not_own_parent CHECK (parent_id <> id)
);
CREATE INDEX location_group_parent_id_idx ON location_group (parent_id);

CREATE TABLE location (
  id                     bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  p_key                  uuid        NOT NULL DEFAULT gen_random_uuid() UNIQUE,
  location_id            text        NOT NULL CHECK (btrim(location_id) <> ''),
  erp_code               text        CHECK (btrim(erp_code) <> ''),
  location_group_id      bigint      REFERENCES location_group (id),
  incoming_active        boolean     NOT NULL DEFAULT true,
  outgoing_active        boolean     NOT NULL DEFAULT true,
  plc_state              integer     NOT NULL DEFAULT 0,
  description            text,
  no_max_transport_units integer     CHECK (no_max_transport_units >= 0),
  ol                     integer     NOT NULL DEFAULT 0,
  create_dt              timestamptz NOT NULL DEFAULT now(),
  last_modified_dt       timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT location_location_id_unique UNIQUE (location_id),
  -- Deferrable so that one bulk upsert may swap ERP codes between locations; the service defers it only for
  -- that statement and checks it right after.
  CONSTRAINT location_erp_code_unique UNIQUE (erp_code) DEFERRABLE INITIALLY IMMEDIATE
);
CREATE INDEX location_location_group_id_idx ON location (location_group_id);

CREATE TABLE transport_unit (
  id                  bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  p_key               uuid        NOT NULL DEFAULT gen_random_uuid() UNIQUE,
  bk                  text        NOT NULL CHECK (btrim(bk) <> ''),
  -- NULL while the unit is only "registered on the spot" by a divide or a PackagingUnit create (D15).
  transport_unit_type text,
  actual_location_id  bigint      REFERENCES location (id),
  ol                  integer     NOT NULL DEFAULT 0,
  create_dt           timestamptz NOT NULL DEFAULT now(),
  last_modified_dt    timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT transport_unit_bk_unique UNIQUE (bk)
);
CREATE INDEX transport_unit_actual_location_id_idx ON transport_unit (actual_location_id);
