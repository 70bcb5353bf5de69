-- Positions stay unique, but only numbered events are indexed (issue 14). An event is written with a NULL position
-- and numbered later by the sequencer; the full unique index of 0007 took an entry for every NULL as well, which no
-- reader uses (every query on `position` has a strict condition such as `position > $1`, which the planner proves
-- implies `position IS NOT NULL`). The unnumbered ones are found by event_outbox_unsequenced_idx.
--
-- Cost on an existing outbox: like every migration, this runs in one transaction, so the index is built without
-- CONCURRENTLY: every change that writes an event waits for the build, about a second per million events kept
-- (0.2–0.3 s for 230,000 on this machine).
-- An operator with a large outbox can build the index beforehand while the service runs:
--   CREATE UNIQUE INDEX CONCURRENTLY event_outbox_position_idx ON event_outbox (position) WHERE position IS NOT NULL;
-- This migration then only drops the old constraint (a brief exclusive lock). A concurrent build that failed leaves
-- an invalid index that the planner never uses: this migration refuses to proceed over one.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('event_outbox_position_idx') AND NOT indisvalid) THEN
    RAISE EXCEPTION 'event_outbox_position_idx is invalid (a failed concurrent build): drop it and start again';
  END IF;
END $$;
CREATE UNIQUE INDEX IF NOT EXISTS event_outbox_position_idx ON event_outbox (position) WHERE position IS NOT NULL;
ALTER TABLE event_outbox DROP CONSTRAINT event_outbox_position_unique;
