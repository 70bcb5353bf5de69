/**
 * The ceiling of the read scenarios: a bare Express 5 app issuing the service's own SELECT statements (imported
 * from src, so the SQL is identical) through pg with the service's pool size, and answering the rows as JSON.
 * No auth, logging, metrics, validation, negotiation or views: what is left is Express, pg and PostgreSQL.
 * With PGBENCH_DATABASE_URL it also runs pgbench's TPC-B-like transaction per request (POST /tpcb).
 */
import { once } from 'node:events';
import express, { type Express } from 'express';
import pg from 'pg';
import { STREAM_PAGE_SIZE } from '../src/http/stream.js';
import { selectUnitByPKey } from '../src/packaging-units/sql.js';
import { selectProductBySku, selectProductsAfter } from '../src/products/sql.js';
import { CEILING_APPLICATION } from './service.js';

const randomInt = (from: number, to: number): number => from + Math.floor(Math.random() * (to - from + 1));

/**
 * pgbench's built-in TPC-B-like transaction, one per HTTP request: what Express 5 + pg can do for a small
 * write transaction, the framework's own ceiling for scenario 4.
 */
async function tpcb(pool: pg.Pool, scale: number): Promise<number> {
  const aid = randomInt(1, 100_000 * scale);
  const bid = randomInt(1, scale);
  const tid = randomInt(1, 10 * scale);
  const delta = randomInt(-5000, 5000);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2', [delta, aid]);
    const { rows } = await client.query<{ abalance: number }>('SELECT abalance FROM pgbench_accounts WHERE aid = $1', [
      aid,
    ]);
    await client.query('UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2', [delta, tid]);
    await client.query('UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2', [delta, bid]);
    await client.query(
      'INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)',
      [tid, bid, aid, delta],
    );
    await client.query('COMMIT');
    return rows[0]?.abalance ?? 0;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

function createCeilingApp(pool: pg.Pool, pgbench: { pool: pg.Pool; scale: number } | undefined): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.get('/health', (_req, res) => {
    res.json({ status: 'UP' });
  });

  app.get('/products', async (req, res) => {
    const product = await selectProductBySku(pool, String(req.query.sku));
    if (product) res.json(product);
    else res.status(404).end();
  });

  app.get('/packaging-units/:pKey', async (req, res) => {
    const unit = await selectUnitByPKey(pool, req.params.pKey);
    if (unit) res.json(unit);
    else res.status(404).end();
  });

  app.post('/tpcb', async (_req, res) => {
    if (!pgbench) {
      res.status(404).end();
      return;
    }
    res.json({ abalance: await tpcb(pgbench.pool, pgbench.scale) });
  });

  // The same keyset pages, page size and drain handling as the service's streamed list, without its views.
  app.get('/products/stream', async (_req, res) => {
    res.status(200).type('application/json');
    res.write('[');
    let separator = '';
    let afterId = 0;
    for (;;) {
      const rows = await selectProductsAfter(pool, afterId, STREAM_PAGE_SIZE);
      let chunk = '';
      for (const row of rows) {
        chunk += separator + JSON.stringify(row);
        separator = ',';
      }
      if (rows.length < STREAM_PAGE_SIZE || res.destroyed) {
        res.end(`${chunk}]`);
        return;
      }
      if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
      afterId = rows.at(-1)!.id;
    }
  });
  return app;
}

async function main(): Promise<void> {
  const pool = new pg.Pool({
    connectionString: process.env.DATABASE_URL,
    max: Number(process.env.DB_POOL_MAX ?? 10),
    application_name: CEILING_APPLICATION,
  });
  pool.on('error', () => undefined);
  const pgbenchUrl = process.env.PGBENCH_DATABASE_URL;
  const pgbench = pgbenchUrl
    ? {
        pool: new pg.Pool({
          connectionString: pgbenchUrl,
          max: pool.options.max,
          application_name: CEILING_APPLICATION,
        }),
        scale: Number(process.env.PGBENCH_SCALE ?? 1),
      }
    : undefined;
  const server = createCeilingApp(pool, pgbench).listen(Number(process.env.PORT ?? 0), '127.0.0.1');
  const stop = (): void => {
    server.close(() => void Promise.all([pool.end(), pgbench?.pool.end()]).finally(() => process.exit(0)));
    server.closeAllConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

void main();
