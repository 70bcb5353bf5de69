-- Products (spec part 2, D2-D4, D10-D13). Quantities are exact: numeric magnitude + unit code.

CREATE TABLE product (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  p_key               uuid        NOT NULL DEFAULT gen_random_uuid() UNIQUE,
  sku                 text        NOT NULL,
  label               text,
  account_id          text,
  base_unit_magnitude numeric     NOT NULL CHECK (base_unit_magnitude > 0),
  base_unit_code      text        NOT NULL,
  description         text,
  availability_state  text        NOT NULL DEFAULT 'AVAILABLE'
                                  CHECK (availability_state IN ('LOCKED', 'QC_LOCKED', 'AVAILABLE')),
  classification      text,
  product_group       text,
  stock_zone          text        CHECK (stock_zone IN ('A', 'B', 'C')),
  overbooking_allowed boolean     NOT NULL DEFAULT false,
  dimension           json,
  details             json,
  ol                  integer     NOT NULL DEFAULT 0,
  create_dt           timestamptz NOT NULL DEFAULT now(),
  last_modified_dt    timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT product_sku_unique UNIQUE (sku)
);

-- Alternative packaging units of measure of a product, kept in the order they were sent.
CREATE TABLE product_unit (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  p_key              uuid        NOT NULL DEFAULT gen_random_uuid() UNIQUE,
  product_id         bigint      NOT NULL REFERENCES product (id) ON DELETE CASCADE,
  position           integer     NOT NULL,
  label              text,
  code               text,
  description        text,
  quantity_magnitude numeric     NOT NULL CHECK (quantity_magnitude > 0),
  quantity_code      text        NOT NULL,
  dimension          json,
  details            json,
  ol                 integer     NOT NULL DEFAULT 0,
  create_dt          timestamptz NOT NULL DEFAULT now(),
  UNIQUE (product_id, position)
);

-- How many of another product may be stacked on this one. Deleting the allowed product is refused while a
-- rule names it (RESTRICT), so a rule never silently disappears.
CREATE TABLE stacking_rule (
  product_id         bigint  NOT NULL REFERENCES product (id) ON DELETE CASCADE,
  position           integer NOT NULL,
  no_products        integer NOT NULL CHECK (no_products >= 0),
  allowed_product_id bigint  NOT NULL REFERENCES product (id) ON DELETE RESTRICT,
  PRIMARY KEY (product_id, position)
);
CREATE INDEX stacking_rule_allowed_product_idx ON stacking_rule (allowed_product_id);
