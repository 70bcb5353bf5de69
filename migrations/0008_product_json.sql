-- A created Product's event resource rendered in SQL (issue 14): a bulk create or import writes its
-- `product.event.created` events with one INSERT … SELECT instead of reading every Product into Node and sending it
-- back. The text must equal `stringifyJson(productView(row))` byte for byte: src/products/view.ts stays the one
-- definition, and test/products/product-json.test.ts holds the two to the same text.

-- A quantity as src/units/quantity.ts writes it (D2); its kind from migration 0003's unit_kind, the one table of units
-- on the database side. NULL for an unknown code. Inlined into the caller: it is not STRICT, and every piece is
-- immutable text (the ::text cast; `text || numeric` would not be).
CREATE FUNCTION quantity_json(magnitude numeric, code text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN '{"@class":"org.openwms.core.units.api.' || unit_kind(code) || '","unitType":["org.openwms.core.units.api.'
    || unit_kind(code) || 'Unit","' || code || '"],"magnitude":' || trim_scale(magnitude)::text || '}';

-- The Product with this SKU as GET renders it in plain JSON (no row when there is none). Built by concatenation in
-- the spec's key order, absent fields left out (`concat` skips a NULL piece). Strings are escaped by to_json, which
-- writes the escapes JSON.stringify writes (availabilityState and stockZone are left to their CHECKs). Magnitudes are
-- trim_scale's text, which is Decimal's toFixed. dimension and details are the JSON text stored: Node wrote it with
-- stringifyJson, and it parses and prints back to itself. createDt is toISOString of what node-pg reads: its
-- milliseconds are truncated, as to_char's MS truncates. An unknown unit code leaves a quantity out: invalid JSON,
-- so the statement fails instead of writing a wrong event.
--
-- One SELECT, so the planner inlines it into the caller (no function call per Product); OFFSET 0 keeps it a
-- subquery of its own, run once per SKU of the caller's rows, so a caller that orders them gets the events in
-- that order without sorting the rendered JSON.
CREATE FUNCTION product_json(sku text) RETURNS TABLE (p_key uuid, resource json)
LANGUAGE sql STABLE AS $$
  SELECT p.p_key, concat(
    '{"pKey":"', p.p_key, '","sku":', to_json(p.sku),
    ',"label":' || to_json(p.label),
    ',"accountId":' || to_json(p.account_id),
    ',"baseUnit":', quantity_json(p.base_unit_magnitude, p.base_unit_code),
    ',"description":' || to_json(p.description),
    ',"availabilityState":"', p.availability_state, '"',
    ',"classification":' || to_json(p.classification),
    ',"group":' || to_json(p.product_group),
    ',"stockZone":"' || p.stock_zone || '"',
    ',"overbookingAllowed":', CASE WHEN p.overbooking_allowed THEN 'true' ELSE 'false' END,
    ',"units":[',
    (SELECT string_agg(concat(
              '{"pKey":"', u.p_key, '"',
              ',"label":' || to_json(u.label),
              ',"code":' || to_json(u.code),
              ',"description":' || to_json(u.description),
              ',"quantity":', quantity_json(u.quantity_magnitude, u.quantity_code),
              ',"dimension":' || u.dimension,
              ',"details":' || u.details,
              '}'), ',' ORDER BY u.position)
       FROM product_unit u
      WHERE u.product_id = p.id),
    ']',
    ',"dimension":' || p.dimension,
    ',"stackingRules":[',
    (SELECT string_agg(concat('{"noProducts":', r.no_products, ',"allowedProduct":{"sku":', to_json(a.sku), '}}'),
                       ',' ORDER BY r.position)
       FROM stacking_rule r JOIN product a ON a.id = r.allowed_product_id
      WHERE r.product_id = p.id),
    ']',
    ',"details":' || p.details,
    ',"ol":', p.ol,
    ',"createDt":"', to_char(p.create_dt AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), '"}'
  )::json
  FROM product p
  WHERE p.sku = product_json.sku
  OFFSET 0
$$;
