import type { Request, Response } from 'express';
import { ApiError, VALIDATION_ERROR, validationError } from '../http/api-error.js';
import type { AddFeatureRoutes } from '../http/feature.js';
import { EVENT_STREAM, JSON_TYPE } from '../http/media-types.js';
import { parseInput } from '../http/validate.js';
import { apiError, serverError } from '../openapi/responses.js';
import { z } from '../openapi/zod.js';
import { EventStreams } from './event-stream.js';
import { FeedPageWriter, type FirstEvents } from './feed-page.js';
import { FeedReader } from './feed-reader.js';
import { skuFilterSchema, typesSchema } from './feed-filter.js';
import { selectFeedPage, type FeedPage } from './sql.js';

const cursorSchema = z.string().regex(/^(0|[1-9]\d{0,17})$/, { error: 'must be a cursor this feed answered' });

const MAX_WAIT_SECONDS = 30;
/** The first read of a JSON page, before its cursor is known good: small, so large events are not held many. */
const FIRST_READ = 8;

export const feedQuerySchema = z.object({
  after: cursorSchema.optional().openapi({
    description:
      'The `next` of the previous answer; without it, the JSON feed starts at the oldest event kept, an event ' +
      'stream with the next event committed (D33)',
  }),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  // Stated in full: zod-to-openapi reads a coercion that takes null (as 0) as nullable; a query has no null.
  wait: z.coerce.number().int().min(0).max(MAX_WAIT_SECONDS).default(0).openapi({
    type: 'integer',
    minimum: 0,
    maximum: MAX_WAIT_SECONDS,
    default: 0,
    description: 'Seconds to wait for an event when none is newer than `after` (long poll)',
  }),
  types: typesSchema.optional(),
  sku: skuFilterSchema.optional(),
});

const lastEventIdHeader = z.object({
  'Last-Event-ID': z
    .string()
    .optional()
    .openapi({ description: 'text/event-stream: the id of the last event received; the stream resumes after it' }),
});

/** D33: Last-Event-ID (what a reconnecting EventSource sends) before `after`; either must be a cursor of the feed. */
function parseResumeCursor(req: Request, after: string | undefined): string | undefined {
  const lastEventId = req.headers['last-event-id'];
  if (typeof lastEventId !== 'string') return after;
  const parsed = cursorSchema.safeParse(lastEventId.trim());
  if (!parsed.success)
    throw validationError([{ path: 'Last-Event-ID', message: 'must be a cursor this feed answered' }]);
  return parsed.data;
}

function cursorExpired(cursor: number, prunedThrough: number): ApiError {
  return new ApiError(
    410,
    'owms.wms.inv.events.cursorExpired',
    `Cursor [${cursor}] is older than the events kept; the oldest kept follows cursor [${prunedThrough}]`,
    { obj: [String(cursor)] },
  );
}

const feedEventSchema = z
  .object({
    id: z.uuid(),
    type: z.string().openapi({ description: 'A D27 event type, e.g. product.event.created' }),
    occurredAt: z.iso.datetime(),
    requestId: z.string().nullable().openapi({ description: 'The X-Request-Id of the request that caused it' }),
    resource: z.record(z.string(), z.unknown()).openapi({ description: 'The resource as the event left it' }),
    cursor: z.string().openapi({ description: 'Continues the feed right after this event' }),
  })
  .strict()
  .openapi('FeedEvent');

/** The body `pageJson` writes. */
const feedPageSchema = z
  .object({
    events: z.array(feedEventSchema),
    next: z.string().openapi({ description: 'The `after` of the next request' }),
  })
  .strict()
  .openapi('FeedPage');

/** D29: the change feed, in commit order, exactly once for a reader that follows `next`. */
export const addFeedRoutes: AddFeatureRoutes = (routes, { reads, events, config, outgoing, logger }) => {
  /**
   * A page from a replica is taken when it has events (the cursor makes it exactly-once wherever it was read) or
   * when the replica has seen the head this process knows of; an empty page from a replica behind that head, or
   * behind the cursor a reader got from the primary, is read again on the primary.
   */
  const readPage = (after: number | undefined, limit: number): Promise<FeedPage> =>
    reads.run(
      (db) => selectFeedPage(db, after, limit),
      (page) => page.events.length > 0 || page.sequencedThrough >= Math.max(after ?? 0, events.signal.head),
    );
  const reader = new FeedReader(readPage, events.signal, logger);
  const streams = new EventStreams(
    { ...config.eventStreams, compressionLevel: config.compressionLevel },
    reader,
    outgoing,
  );
  const pages = new FeedPageWriter(reader, outgoing);

  /**
   * Where a request continues (a new stream without a cursor: the head), its cursor checked against the feed, and
   * the first events after it as the reader's entries. Read here, so the rows die with this call: a page whose client
   * takes nothing used to hold its own copy of them until it was cut (issue 33).
   */
  const checkedStart = async (
    requested: number | undefined,
    live: boolean,
    firstRead: number,
  ): Promise<{ after: number; first: FirstEvents }> => {
    const page = await readPage(requested, live && requested === undefined ? 0 : firstRead);
    const after = requested ?? (live ? page.sequencedThrough : page.prunedThrough);
    if (after < page.prunedThrough) throw cursorExpired(after, page.prunedThrough);
    if (after > page.sequencedThrough) {
      throw validationError([{ path: 'after', message: 'is past the newest event: not a cursor of this feed' }]);
    }
    const entries = page.events.length > 0 ? reader.remember(after, page.events) : [];
    return { after, first: { entries, atHead: page.events.length < firstRead } };
  };

  routes.add({
    method: 'GET',
    path: '/v1/events',
    produces: [JSON_TYPE, EVENT_STREAM],
    handler: async (req: Request, res: Response) => {
      const query = parseInput(feedQuerySchema, req.query, 'query');
      const live = req.mediaType === EVENT_STREAM;
      if (live) streams.admit();
      const resumed = live ? parseResumeCursor(req, query.after) : query.after;
      const requested = resumed === undefined ? undefined : Number(resumed);
      // A new stream without a cursor starts now (issue 27): a live view wants what happens next, not the history.
      const firstRead = live ? 0 : Math.min(query.limit, FIRST_READ);
      const { after, first } = await checkedStart(requested, live, firstRead);
      const filter = { types: query.types, sku: query.sku };
      if (live) {
        await streams.send(req, res, { after, limit: query.limit, filter });
        return;
      }
      // A long poll ends with its token: it answers what it has then.
      const tokenLeftMs = (req.principal?.expiresAtMs ?? Infinity) - Date.now();
      const waitMs = Math.max(0, Math.min(query.wait * 1000, tokenLeftMs));
      await pages.send(req, res, { after, first, limit: query.limit, filter, waitMs });
    },
    doc: {
      operationId: 'events-feed',
      tags: ['Events'],
      summary: 'Stock events in commit order after a cursor; long-polls with wait, or streams them live',
      description:
        'With Accept: text/event-stream the feed is a stream of Server-Sent Events (D33) that stays open: it opens ' +
        'with `retry:` and an `id:` of its start position before any event (D39), then per event `id:` its cursor, ' +
        '`event:` its type and `data:` its FeedEvent JSON. It starts after Last-Event-ID (what a reconnecting ' +
        'EventSource sends), else after `after`, else with the next event committed; `limit` is the most events it ' +
        'takes at once, `wait` is not used. `types` and `sku` filter the JSON feed and the stream alike (D39): only ' +
        'matching events are sent, while `next` and the ids still count positions of the whole feed (a filtered ' +
        'stream sends a bare `id:` after a batch whose last events did not match), so a filtered reader resumes ' +
        'exactly. The stream is gzip-compressed when Accept-Encoding allows it, flushed after each batch. A ' +
        `comment (\`: keep-alive\`) follows every EVENT_STREAMS_HEARTBEAT_MS (15 s) without an event. It ends when ` +
        'its token does (exp plus the 30 s clock tolerance) with a comment saying so, and when the instance shuts ' +
        'down; a client that takes nothing for STREAM_STALL_MS while STREAM_BUFFER_BYTES wait is disconnected. A ' +
        'long poll answers when its token ends. At most EVENT_STREAMS_MAX (1000) streams per instance.',
      request: { query: feedQuerySchema, headers: lastEventIdHeader },
      responses: {
        200: {
          description: 'The events after `after`, oldest first, and the cursor to continue from; or their stream',
          content: {
            [JSON_TYPE]: feedPageSchema,
            [EVENT_STREAM]: z.string().openapi({ example: 'id: 42\nevent: product.event.created\ndata: {…}\n\n' }),
          },
        },
        400: apiError(
          'A cursor past the newest event; `types` naming an unknown type or more than 50; `sku` over 255 ' +
            'characters or with control characters',
          [VALIDATION_ERROR],
        ),
        410: apiError('The cursor is older than the events kept', ['owms.wms.inv.events.cursorExpired']),
        503: serverError('text/event-stream: this instance has EVENT_STREAMS_MAX streams open already', {
          'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
        }),
      },
    },
  });
};
