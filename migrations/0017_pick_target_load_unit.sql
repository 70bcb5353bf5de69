-- Issue 38 item 3: a pick into a LoadUnit (D32) takes its target and its unit in one round trip instead of up to
-- nine. Locks in the order every move takes them (D21, D32; the caller holds the reservation's already): the
-- LoadUnit at the position, created with its TransportUnit when missing (D15) and `new_load_unit_type` is given;
-- then the unit; then D17's admission of the unit's Product. Each statement here takes a snapshot of its own (READ
-- COMMITTED), so what follows a lock wait reads the rows as the writer waited for left them.
--
-- Refusals are answered, not raised, so that the service words them as before:
--   target_found = false   no LoadUnit at the position, and none may be created (no `new_load_unit_type`)
--   refusal 'in-place'      the unit already lies in that LoadUnit (D21)
--   refusal 'assigned'      D17, mixed LoadUnits not allowed: the LoadUnit is assigned to, or carries, another
--                           Product
-- The LoadUnit is answered as it is after the admission. `unit_version` names the version of the unit the lock
-- found: a caller that reads the unit in the calling statement (whose snapshot is older than this function's) can
-- tell whether it read that version.
CREATE FUNCTION lock_pick_target_load_unit(
  target_bk text,
  target_position text,
  new_load_unit_type text,
  picked_unit bigint,
  mixed_allowed boolean
) RETURNS TABLE (
  target_found boolean,
  refusal text,
  target_created boolean,
  product_assigned boolean,
  unit_version text,
  lu_id bigint,
  lu_p_key uuid,
  lu_transport_unit_id bigint,
  lu_transport_unit_bk text,
  lu_physical_position text,
  lu_label text,
  lu_load_unit_type text,
  lu_locked boolean,
  lu_product_id bigint,
  lu_dimension json,
  lu_ol integer,
  lu_create_dt timestamptz
) LANGUAGE plpgsql AS $$
DECLARE
  target_id bigint;
  target_product bigint;
  registered bigint;
  unit_holder bigint;
  unit_product bigint;
BEGIN
  target_found := true;
  target_created := false;
  product_assigned := false;
  SELECT lu.id, lu.product_id INTO target_id, target_product
    FROM load_unit lu JOIN transport_unit tu ON tu.id = lu.transport_unit_id
   WHERE tu.bk = target_bk AND lu.physical_position = target_position
     FOR UPDATE OF lu;
  IF target_id IS NULL THEN
    IF new_load_unit_type IS NULL THEN
      target_found := false;
      RETURN NEXT;
      RETURN;
    END IF;
    -- Both inserts yield to a concurrent one (the row is then read under its lock); the LoadUnit's foreign-key
    -- check waits for a divide holding the TransportUnit, so a divide never miscounts.
    INSERT INTO transport_unit (bk) VALUES (target_bk) ON CONFLICT (bk) DO NOTHING;
    SELECT tu.id INTO registered FROM transport_unit tu WHERE tu.bk = target_bk;
    INSERT INTO load_unit (transport_unit_id, physical_position, load_unit_type)
    VALUES (registered, target_position, new_load_unit_type)
    ON CONFLICT (transport_unit_id, physical_position) DO NOTHING;
    target_created := FOUND;
    SELECT lu.id, lu.product_id INTO target_id, target_product
      FROM load_unit lu
     WHERE lu.transport_unit_id = registered AND lu.physical_position = target_position
       FOR UPDATE;
    IF target_id IS NULL THEN
      RAISE EXCEPTION 'LoadUnit %/% neither inserted nor found', target_bk, target_position;
    END IF;
  END IF;

  SELECT pu.load_unit_id, pu.product_id, pu.xmin::text INTO unit_holder, unit_product, unit_version
    FROM packaging_unit pu WHERE pu.id = picked_unit FOR UPDATE;
  IF unit_product IS NULL THEN
    RAISE EXCEPTION 'PackagingUnit % not found', picked_unit;
  END IF;
  IF unit_holder = target_id THEN
    refusal := 'in-place';
  ELSIF NOT mixed_allowed AND (target_product <> unit_product OR EXISTS (
          SELECT 1 FROM packaging_unit pu
           WHERE pu.load_unit_id = target_id AND pu.product_id <> unit_product AND pu.qty_magnitude > 0)) THEN
    refusal := 'assigned';
  ELSIF target_product IS NULL THEN
    UPDATE load_unit SET product_id = unit_product, ol = ol + 1, last_modified_dt = now()
     WHERE id = target_id AND product_id IS DISTINCT FROM unit_product;
    product_assigned := FOUND;
  END IF;

  SELECT lu.id, lu.p_key, lu.transport_unit_id, tu.bk, lu.physical_position, lu.label, lu.load_unit_type, lu.locked,
         lu.product_id, lu.dimension, lu.ol, lu.create_dt
    INTO lu_id, lu_p_key, lu_transport_unit_id, lu_transport_unit_bk, lu_physical_position, lu_label,
         lu_load_unit_type, lu_locked, lu_product_id, lu_dimension, lu_ol, lu_create_dt
    FROM load_unit lu JOIN transport_unit tu ON tu.id = lu.transport_unit_id
   WHERE lu.id = target_id;
  RETURN NEXT;
END;
$$;
