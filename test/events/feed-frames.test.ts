import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerTypeParsers } from '../../src/db/type-parsers.js';
import { selectFeedPage } from '../../src/events/sql.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { feedFrame } from '../support/feed-frames.js';

let db: TestDatabase;

beforeAll(async () => {
  registerTypeParsers();
  db = await createTestDatabase();
});

afterAll(() => db.drop());

// Far above any position the sequencer assigns in a test database.
const POSITION = 9_000_000_000_000;

/** Request ids and resources with everything JSON escapes or keeps as it is. */
const EVENTS = [
  { requestId: 'plain-1', occurredAt: '2026-11-29 10:00:00.999999+00', resource: '{"sku":"A-1","qty":1.50}' },
  { requestId: null, occurredAt: '1970-01-01 00:00:00+00', resource: '{"a" : [1, 2.000, {"b":null}]}' },
  {
    requestId: 'quote " backslash \\ slash / newline \n tab \t return \r bell \u0007 unit \u001f del \u007f',
    occurredAt: '2026-02-28 23:59:59.0005+01',
    resource: '{"label":"Ä ü 漢字 😀 \\u00e9 \\"quoted\\""}',
  },
  { requestId: '</script><b>', occurredAt: '2099-12-31 23:59:59.001+00', resource: '{}' },
];

describe('the feed page as the database renders it (D29, issue 33)', () => {
  it('gives each event as the plain rendering of its stored parts would, byte for byte', async () => {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      for (const [index, event] of EVENTS.entries()) {
        await client.query(
          `INSERT INTO event_outbox (type, resource_key, request_id, occurred_at, resource, position)
           VALUES ('pu.event.changed', 'K', $1, $2, $3, $4)`,
          [event.requestId, event.occurredAt, event.resource, POSITION + index],
        );
      }
      const { rows: stored } = await client.query<{
        position: number;
        id: string;
        type: string;
        requestId: string | null;
        occurredAt: Date;
        resource: string;
      }>(
        `SELECT position, id, type, request_id AS "requestId", occurred_at AS "occurredAt", resource::text AS resource
           FROM event_outbox WHERE position >= $1 ORDER BY position`,
        [POSITION],
      );

      const page = await selectFeedPage(client as never, POSITION - 1, 10);

      expect(stored.map((event) => event.occurredAt.toISOString())).toEqual([
        '2026-11-29T10:00:00.999Z',
        '1970-01-01T00:00:00.000Z',
        '2026-02-28T22:59:59.000Z',
        '2099-12-31T23:59:59.001Z',
      ]);
      expect(page.events.map(({ position, type, frame }) => ({ position, type, frame }))).toEqual(
        stored.map(feedFrame),
      );
      for (const event of page.events) {
        const json = event.frame.slice(event.frame.indexOf('\ndata: ') + 7, -2);
        expect(JSON.parse(json)).toMatchObject({ cursor: String(event.position), type: 'pu.event.changed' });
      }
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});
