-- Run before 0012 on a database that has not applied it yet (src/db/migrate.ts): 0012 gives every reservation its
-- Product, by foreign key, from the reservation's ledger rows. Before 0012 a Product could be deleted once its
-- units were gone, while released reservations still named it in the ledger; those reservations have no Product
-- to keep, so they go first. An active one cannot name a deleted Product: its units hold the Product.
DELETE FROM reservation r
 WHERE NOT EXISTS (SELECT 1 FROM reservation a WHERE a.reservation_id = r.reservation_id AND a.released_at IS NULL)
   AND NOT EXISTS (SELECT 1 FROM product p
                    WHERE p.id = (SELECT m.product_id FROM stock_movement m
                                   WHERE m.reservation_id = r.reservation_id LIMIT 1));
