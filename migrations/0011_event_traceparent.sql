-- D36: the W3C traceparent of the request that caused an event, so that publishing it, and a consumer's work on it,
-- join that request's trace. NULL when the request was not traced (tracing off).
-- A plain nullable column: adding it rewrites nothing, and it carries over as it is if the table is ever partitioned.
ALTER TABLE event_outbox ADD COLUMN traceparent text;
