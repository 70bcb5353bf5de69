-- Stock at an instant by commit (D40): a transaction's ledger rows count from its commit, all together.
--
-- Each ledger row records its transaction (`xact_id`, filled by the column's default, so no writer names it), and
-- the sequencer records a commit boundary (`feed_boundary`) whenever a numbering run leaves no committed event
-- unnumbered: the last position it assigned, the instant, and the run's snapshot. Every transaction visible in that
-- snapshot has committed and all its events are numbered at or below that position; every other one is numbered
-- after it. Stock at an instant is then the current figures less the ledger rows of the transactions the last
-- boundary at or before it does not see (src/stock/sql.ts), read from the index below: its cost is the Product's
-- changes since that boundary.
--
-- Rows written before this migration have no transaction (NULL): they all committed before it. The first boundary
-- is the migration itself, at -infinity, seeing every transaction before it; for instants before the migration
-- those rows are still taken by their own time (`commit_order_since`), as before.
--
-- Cost on a large ledger: adding the column and its default changes the catalog only (the default applies to new
-- rows). The index is partial (only rows with a transaction), so on existing rows its build is one scan of the
-- ledger under a SHARE lock (stock changes wait, reads go on): measured in bench/notes.md ("Migration 0016"). An
-- operator can build it beforehand per part while the service runs, and this migration then attaches those:
--   CREATE INDEX CONCURRENTLY ON <part> (product_id, xact_id)
--     INCLUDE (qty_before, qty_after, reserved_before, reserved_after) WHERE xact_id IS NOT NULL;
ALTER TABLE stock_movement ADD COLUMN xact_id xid8;
ALTER TABLE stock_movement ALTER COLUMN xact_id SET DEFAULT pg_current_xact_id();
CREATE INDEX stock_movement_product_xact_idx ON stock_movement (product_id, xact_id)
  INCLUDE (qty_before, qty_after, reserved_before, reserved_after) WHERE xact_id IS NOT NULL;

-- A position may have several boundaries: a stock reading that finds its Product changed by a transaction that
-- wrote no event records one at the current position (src/stock/sql.ts), as no numbering run would.
CREATE TABLE feed_boundary (
  id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  position     bigint      NOT NULL,
  committed_at timestamptz NOT NULL,
  snapshot     pg_snapshot NOT NULL
);
CREATE INDEX feed_boundary_position_idx ON feed_boundary (position, committed_at);
CREATE INDEX feed_boundary_committed_at_idx ON feed_boundary (committed_at);
INSERT INTO feed_boundary (position, committed_at, snapshot)
SELECT sequenced_through, '-infinity', pg_current_snapshot() FROM event_feed_state;

ALTER TABLE ledger_horizon ADD COLUMN commit_order_since timestamptz;
UPDATE ledger_horizon SET commit_order_since = now();
