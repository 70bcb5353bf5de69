-- Idempotent retries (Idempotency-Key): the first response to a key, stored for replay. A record is claimed
-- inside the request's own transaction, so the work and the claim commit or roll back together.
CREATE TABLE idempotency_record (
  subject      text        NOT NULL,
  key          text        NOT NULL,
  request_hash text        NOT NULL,
  method       text        NOT NULL,
  path         text        NOT NULL,
  -- 'pending' from the claim until the response is stored; a record whose response was lost stays pending.
  state        text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done')),
  status       integer,
  headers      json,
  body         text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (subject, key)
);
CREATE INDEX idempotency_record_expires_idx ON idempotency_record (expires_at);
