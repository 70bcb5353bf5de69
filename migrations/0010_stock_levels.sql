-- Stock levels (D31): how much of a Product is on hand, reserved and available, now and at a past instant.

-- What makes a unit allocatable (D23), written once. Allocation's candidate query and the stock levels both call
-- these functions; PostgreSQL inlines them, so the allocation query still matches packaging_unit_allocatable_idx.
-- The unit's own part: it lies in a LoadUnit (loose stock on a Location is never allocated) and is AVAILABLE.
CREATE FUNCTION allocatable_unit(unit_state text, load_unit_id bigint) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN unit_state = 'AVAILABLE' AND load_unit_id IS NOT NULL;
-- Its LoadUnit's part: not locked for allocation (D16).
CREATE FUNCTION allocatable_load_unit(load_unit_locked boolean) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN NOT load_unit_locked;
-- Its Product's part: the Product is AVAILABLE.
CREATE FUNCTION allocatable_product(availability_state text) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN availability_state = 'AVAILABLE';
-- What a unit the unit's own part admits can still give: its quantity less its reservations; 0 for any other unit.
CREATE FUNCTION allocatable_free(unit_state text, load_unit_id bigint, qty_base numeric, reserved_base numeric)
  RETURNS numeric
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE WHEN allocatable_unit(unit_state, load_unit_id) THEN qty_base - reserved_base ELSE 0 END;

-- Per Product, the sums over its units, kept by the triggers below in the statement that changes a unit, so they
-- commit with the change or not at all. `free` sums allocatable_free; a reading subtracts what lies in locked
-- LoadUnits and applies the Product's state, which are not kept here: a trigger on a LoadUnit or a TransportUnit
-- would have to read units that another transaction may be changing. Amounts in the kind's smallest unit (PC or
-- MG), as qty_base.
CREATE TABLE stock_level (
  product_id bigint  PRIMARY KEY REFERENCES product (id) ON DELETE CASCADE,
  on_hand    numeric NOT NULL,
  reserved   numeric NOT NULL,
  free       numeric NOT NULL,
  CONSTRAINT stock_level_within_bounds CHECK (reserved >= 0 AND on_hand >= reserved AND free >= 0
                                              AND free <= on_hand - reserved)
);

-- An inserted or deleted set of units (TG_ARGV[0]: 1 or -1), or an update's old and new rows, as one UPDATE per
-- statement. Rows an update leaves unchanged in these columns add nothing and write nothing. (An upsert cannot
-- take their place: PostgreSQL checks the proposed row, a negative delta, against the CHECK before it finds the
-- conflict; every Product has its row from its creation on.)
CREATE FUNCTION stock_level_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    UPDATE stock_level sl
       SET on_hand = sl.on_hand + d.on_hand, reserved = sl.reserved + d.reserved, free = sl.free + d.free
      FROM (SELECT c.product_id, sum(c.on_hand) AS on_hand, sum(c.reserved) AS reserved, sum(c.free) AS free
              FROM (SELECT n.product_id, n.qty_base AS on_hand, n.reserved_base AS reserved,
                           allocatable_free(n.state, n.load_unit_id, n.qty_base, n.reserved_base) AS free
                      FROM stock_level_new n
                    UNION ALL
                    SELECT o.product_id, -o.qty_base, -o.reserved_base,
                           -allocatable_free(o.state, o.load_unit_id, o.qty_base, o.reserved_base)
                      FROM stock_level_old o) AS c
             GROUP BY c.product_id
            HAVING sum(c.on_hand) <> 0 OR sum(c.reserved) <> 0 OR sum(c.free) <> 0) AS d
     WHERE sl.product_id = d.product_id;
  ELSE
    UPDATE stock_level sl
       SET on_hand = sl.on_hand + d.on_hand, reserved = sl.reserved + d.reserved, free = sl.free + d.free
      FROM (SELECT c.product_id, TG_ARGV[0]::int * sum(c.qty_base) AS on_hand,
                   TG_ARGV[0]::int * sum(c.reserved_base) AS reserved,
                   TG_ARGV[0]::int * sum(allocatable_free(c.state, c.load_unit_id, c.qty_base, c.reserved_base)) AS free
              FROM stock_level_changed c
             GROUP BY c.product_id) AS d
     WHERE sl.product_id = d.product_id;
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER stock_level_insert AFTER INSERT ON packaging_unit
  REFERENCING NEW TABLE AS stock_level_changed FOR EACH STATEMENT EXECUTE FUNCTION stock_level_change('1');
CREATE TRIGGER stock_level_delete AFTER DELETE ON packaging_unit
  REFERENCING OLD TABLE AS stock_level_changed FOR EACH STATEMENT EXECUTE FUNCTION stock_level_change('-1');
CREATE TRIGGER stock_level_update AFTER UPDATE ON packaging_unit
  REFERENCING OLD TABLE AS stock_level_old NEW TABLE AS stock_level_new
  FOR EACH STATEMENT EXECUTE FUNCTION stock_level_change();

-- Every Product gets its row, with nothing in it, when it is created.
CREATE FUNCTION stock_level_open() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stock_level (product_id, on_hand, reserved, free) SELECT p.id, 0, 0, 0 FROM stock_level_products p;
  RETURN NULL;
END;
$$;
CREATE TRIGGER stock_level_open AFTER INSERT ON product
  REFERENCING NEW TABLE AS stock_level_products FOR EACH STATEMENT EXECUTE FUNCTION stock_level_open();

-- The sums of what is there already; no Product or unit may change until this migration commits.
LOCK TABLE product, packaging_unit IN SHARE MODE;
INSERT INTO stock_level (product_id, on_hand, reserved, free)
SELECT p.id, COALESCE(s.on_hand, 0), COALESCE(s.reserved, 0), COALESCE(s.free, 0)
  FROM product p
  LEFT JOIN (SELECT product_id, sum(qty_base) AS on_hand, sum(reserved_base) AS reserved,
                    sum(allocatable_free(state, load_unit_id, qty_base, reserved_base)) AS free
               FROM packaging_unit GROUP BY product_id) s ON s.product_id = p.id;

-- A reading subtracts the free stock in locked LoadUnits: it finds the few locked ones by load_unit_locked_idx,
-- then the Product's units in them by LoadUnit and Product together, never all the Product's units.
CREATE INDEX load_unit_locked_idx ON load_unit (id) WHERE locked;
DROP INDEX packaging_unit_load_unit_idx;
CREATE INDEX packaging_unit_load_unit_idx ON packaging_unit (load_unit_id, product_id) WHERE load_unit_id IS NOT NULL;

-- Stock at a past instant: the current figures less the changes of the ledger rows after that instant, read from
-- this index alone (the ledger is append-only, so its pages stay all-visible). Building it on a large ledger takes
-- a while and blocks ledger writes meanwhile; an operator may build it first with CREATE INDEX CONCURRENTLY under
-- the same name, and this statement then leaves it.
CREATE INDEX IF NOT EXISTS stock_movement_product_time_idx ON stock_movement (product_id, occurred_at)
  INCLUDE (qty_before, qty_after, reserved_before, reserved_after);

-- Where the kept ledger begins (D34): stock at an earlier instant cannot be told (410). NULL: kept from the start.
CREATE TABLE ledger_horizon (
  id         boolean     PRIMARY KEY DEFAULT true CHECK (id),
  kept_since timestamptz
);
INSERT INTO ledger_horizon (kept_since) VALUES (NULL);
