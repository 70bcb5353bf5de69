-- Stock events (D27–D29): a transactional outbox that is also the change feed.
--
-- A writing transaction appends its events here in the same transaction as the change (no change without its
-- events, no event without its change). `seq` is the order of insertion. `position` is the order of commit:
-- NULL when written, assigned afterwards by the sequencer (src/events/sequencer.ts), which numbers only events
-- whose transactions have committed. A feed reader and the relay read by `position`, so an event of a
-- transaction that started early and commits late is numbered after what committed before it and is never
-- skipped by a reader already past a lower number.
CREATE TABLE event_outbox (
  seq          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  position     bigint,
  id           uuid        NOT NULL DEFAULT gen_random_uuid(),
  type         text        NOT NULL,
  -- The pKey (or reservationId) of the changed resource: the unit of ordering for consumers.
  resource_key text        NOT NULL,
  request_id   text,
  occurred_at  timestamptz NOT NULL DEFAULT now(),
  -- json, not jsonb: the resource keeps the key order and number text in which it was rendered.
  resource     json        NOT NULL,
  CONSTRAINT event_outbox_position_unique UNIQUE (position)
);
CREATE INDEX event_outbox_unsequenced_idx ON event_outbox (seq) WHERE position IS NULL;

-- One row. Its lock serialises the sequencers of all instances; it records how far positions are assigned
-- and how far retention has removed events (a feed cursor below that is expired).
CREATE TABLE event_feed_state (
  id                integer PRIMARY KEY CHECK (id = 1),
  sequenced_through bigint  NOT NULL DEFAULT 0,
  pruned_through    bigint  NOT NULL DEFAULT 0
);
INSERT INTO event_feed_state (id) VALUES (1);

-- One row per exchange the relay publishes to: how far it has published (every confirmed event up to this
-- position) and which instance holds the lease to publish, so that each event is published by one instance.
CREATE TABLE event_relay_state (
  exchange          text        PRIMARY KEY,
  published_through bigint      NOT NULL DEFAULT 0,
  owner             text,
  lease_until       timestamptz
);
