import type { Request, Response } from 'express';
import { ApiError, validationError } from '../http/api-error.js';
import type { AddFeatureRoutes } from '../http/feature.js';
import { parseInput } from '../http/validate.js';
import { z } from '../openapi/zod.js';
import { selectFeedPage, type FeedPage, type StoredEvent } from './sql.js';

// A HAL client that expands a template without its optional variables sends `?after=&limit=`: absent.
const emptyIsAbsent = (value: unknown): unknown => (value === '' ? undefined : value);

const cursorSchema = z.string().regex(/^(0|[1-9]\d{0,17})$/, { error: 'must be a cursor this feed answered' });

export const feedQuerySchema = z
  .object({
    after: z.preprocess(emptyIsAbsent, cursorSchema.optional()).openapi({
      description: 'The `next` of the previous answer; without it, the feed starts at the oldest event kept',
    }),
    limit: z.preprocess(emptyIsAbsent, z.coerce.number().int().min(1).max(1000).default(100)),
    wait: z.preprocess(
      emptyIsAbsent,
      z.coerce.number().int().min(0).max(30).default(0).openapi({
        description: 'Seconds to wait for an event when none is newer than `after` (long poll)',
      }),
    ),
  })
  .strict();

function cursorExpired(cursor: number, prunedThrough: number): ApiError {
  return new ApiError(
    410,
    'owms.wms.inv.events.cursorExpired',
    `Cursor [${cursor}] is older than the events kept; the oldest kept follows cursor [${prunedThrough}]`,
    { obj: [String(cursor)] },
  );
}

/** The stored resource JSON goes out as stored: no parse and re-encode, every digit kept. */
function eventJson(event: StoredEvent): string {
  return (
    `{"id":${JSON.stringify(event.id)},"type":${JSON.stringify(event.type)},` +
    `"occurredAt":${JSON.stringify(event.occurredAt.toISOString())},"requestId":${JSON.stringify(event.requestId)},` +
    `"resource":${event.resource},"cursor":"${event.position}"}`
  );
}

function pageJson(page: FeedPage, after: number): string {
  const next = page.events.length > 0 ? page.events[page.events.length - 1]!.position : after;
  return `{"events":[${page.events.map(eventJson).join(',')}],"next":"${next}"}`;
}

/** D29: the change feed, in commit order, exactly once for a reader that follows `next`. */
export const addFeedRoutes: AddFeatureRoutes = (routes, { pool, events }) => {
  routes.add({
    method: 'GET',
    path: '/v1/events',
    produces: ['application/json'],
    handler: async (req: Request, res: Response) => {
      const query = parseInput(feedQuerySchema, req.query, 'query');
      const requested = query.after === undefined ? undefined : Number(query.after);
      let page = await selectFeedPage(pool, requested, query.limit);
      const after = requested ?? page.prunedThrough;
      if (after < page.prunedThrough) throw cursorExpired(after, page.prunedThrough);
      if (after > page.sequencedThrough) {
        throw validationError([{ path: 'after', message: 'is past the newest event: not a cursor of this feed' }]);
      }
      if (page.events.length === 0 && query.wait > 0) {
        // No connection is held while waiting; the page is read again once an event is numbered.
        const gone = new AbortController();
        res.once('close', () => gone.abort());
        await events.signal.waitBeyond(after, query.wait * 1000, gone.signal);
        if (gone.signal.aborted) return;
        page = await selectFeedPage(pool, after, query.limit);
        if (after < page.prunedThrough) throw cursorExpired(after, page.prunedThrough);
      }
      res.status(200).type('application/json').send(pageJson(page, after));
    },
    doc: {
      operationId: 'events-feed',
      tags: ['Events'],
      summary: 'Stock events in commit order after a cursor; long-polls with wait',
      request: { query: feedQuerySchema },
      responses: {
        200: { description: '{events: [{id, type, occurredAt, requestId, resource, cursor}], next}' },
        400: { description: 'core.validation.error: malformed cursor, limit or wait' },
        401: { description: 'Missing or invalid bearer token' },
        410: { description: 'owms.wms.inv.events.cursorExpired: the cursor is older than the events kept' },
      },
    },
  });
};
