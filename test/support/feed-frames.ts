import type { FramedEvent } from '../../src/events/sql.js';

/** What a feed event is made of, as the outbox stores it. */
export interface FeedEventParts {
  readonly position: number;
  readonly id: string;
  readonly type: string;
  readonly requestId: string | null;
  readonly occurredAt: Date;
  /** The resource's JSON text as stored. */
  readonly resource: string;
}

/**
 * An event's SSE block as D29 describes it, rendered the plain way: what the database's rendering (selectFeedPage)
 * must give byte for byte, and the frames of the unit tests' feeds.
 */
export function feedFrame(event: FeedEventParts): FramedEvent {
  const json =
    `{"id":${JSON.stringify(event.id)},"type":${JSON.stringify(event.type)},` +
    `"occurredAt":${JSON.stringify(event.occurredAt.toISOString())},"requestId":${JSON.stringify(event.requestId)},` +
    `"resource":${event.resource},"cursor":"${event.position}"}`;
  return {
    position: event.position,
    type: event.type,
    frame: `id: ${event.position}\nevent: ${event.type}\ndata: ${json}\n\n`,
  };
}
