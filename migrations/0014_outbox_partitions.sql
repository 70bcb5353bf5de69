-- The outbox in parts (D34, issue 29): event_outbox becomes a table partitioned by RANGE (position), so retention
-- drops whole parts instead of deleting millions of rows under the sequencer's lock.
--
-- Why by position: readers and the relay ask for `position > cursor`, which then visits only the parts at or past
-- the cursor; a part holds a contiguous range of positions, so dropping the oldest parts moves `pruned_through` to
-- an exact bound; and positions stay unique across the table (the partition key may carry a unique index).
-- Events are written unnumbered (NULL position): those live in the DEFAULT part `event_outbox_unnumbered`, and the
-- sequencer's UPDATE moves each into the part of its position as it numbers it. Parts of the next positions are
-- created by the service ahead of numbering (src/events/partitions.ts), EVENTS_PARTITION_SIZE positions each.
--
-- Conversion without copying: the existing table is attached, with every column it has (whatever earlier migrations
-- added), as the first part, covering positions 0 … the highest assigned; only its unnumbered events (those
-- committed but not yet numbered, a handful) are moved to the default part. No event is renumbered or lost.
-- Cost: the attach scans the old table once to prove every row fits the part's bound, under the migration's
-- exclusive lock (writers of events wait meanwhile). Measured (bench/notes.md, "Outbox in parts"): 2,000,000 events
-- (581 MB) in 1.2 s on this shared 2-core machine at load 9, so about 6 s for 10,000,000; the scan is linear.
ALTER TABLE event_outbox RENAME TO event_outbox_p0;
ALTER INDEX event_outbox_position_idx RENAME TO event_outbox_p0_position_idx;
ALTER INDEX event_outbox_unsequenced_idx RENAME TO event_outbox_p0_unsequenced_idx;

CREATE TABLE event_outbox (
  LIKE event_outbox_p0 INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING IDENTITY INCLUDING STORAGE INCLUDING COMMENTS
) PARTITION BY RANGE (position);
CREATE UNIQUE INDEX event_outbox_position_idx ON event_outbox (position) WHERE position IS NOT NULL;
CREATE INDEX event_outbox_unsequenced_idx ON event_outbox (seq) WHERE position IS NULL;
CREATE TABLE event_outbox_unnumbered PARTITION OF event_outbox DEFAULT;

DO $$
DECLARE
  old_sequence text := pg_get_serial_sequence('event_outbox_p0', 'seq');
  last_seq bigint;
  head bigint;
BEGIN
  -- seq goes on from where the old table's identity was, so insertion order stays comparable across the change.
  EXECUTE format('SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM %s', old_sequence)
    INTO last_seq;
  PERFORM setval(pg_get_serial_sequence('event_outbox', 'seq'), GREATEST(last_seq, 0) + 1, false);

  INSERT INTO event_outbox OVERRIDING SYSTEM VALUE SELECT * FROM event_outbox_p0 WHERE position IS NULL;
  DELETE FROM event_outbox_p0 WHERE position IS NULL;
  ALTER TABLE event_outbox_p0 ALTER COLUMN seq DROP IDENTITY;
  ALTER TABLE event_outbox_p0 DROP CONSTRAINT event_outbox_pkey;

  SELECT COALESCE(max(position), 0) INTO head FROM event_outbox_p0;
  EXECUTE format('ALTER TABLE event_outbox ATTACH PARTITION event_outbox_p0 FOR VALUES FROM (0) TO (%s)', head + 1);
END $$;
