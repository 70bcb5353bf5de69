import type { Express } from 'express';
import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import { migrate } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { openReadReplica, type ReadReplica } from '../../src/db/read-replica.js';
import { startEvents, type EventsRuntime } from '../../src/events/runtime.js';
import { testConfig } from '../support/app.js';
import {
  missingReplicaTools,
  startReplicatedClusters,
  type ReplicatedClusters,
} from '../support/replicated-clusters.js';
import { describeWith } from '../support/required-suite.js';
import { call, expectStatus, givenProduct, pc } from '../support/stock-api.js';

const MAX_LAG_MS = 2000;

describeWith(
  { kind: 'READ-REPLICA', requireVariable: 'REQUIRE_REPLICA', missing: missingReplicaTools() },
  'reads on a streaming replica (DATABASE_READ_URL)',
  () => {
    let clusters: ReplicatedClusters;
    let config: Config;
    let primary: pg.Pool;
    let readReplica: ReadReplica;
    let events: EventsRuntime;
    let app: Express;

    beforeAll(async () => {
      clusters = await startReplicatedClusters();
      config = testConfig({
        DATABASE_URL: clusters.primaryUrl,
        DATABASE_READ_URL: clusters.replicaUrl,
        DATABASE_READ_MAX_LAG_MS: String(MAX_LAG_MS),
        // These tests see which server answered by what a paused replica still holds after a write straight on the
        // primary; with the default (any-write) such a read would wait for that write and go to the primary.
        DATABASE_READ_AFTER: 'own-writes',
      });
      const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
      primary = createPool(clusters.primaryUrl, config.db, logger);
      await migrate(primary, logger);
      readReplica = await openReadReplica(primary, config.db, config.readReplica!, logger);
      events = startEvents(primary, config, logger);
      app = createApp({ config, pool: primary, logger, events, readReplica });
    });

    // A test that fails with replay paused must not leave the next one a replica that never catches up.
    afterEach(async () => {
      await clusters.onReplica('SELECT pg_wal_replay_resume()').catch(() => undefined);
    });

    afterAll(async () => {
      await events?.stop();
      await readReplica?.close();
      await primary?.end();
      await clusters?.destroy();
    });

    async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
      for (const deadline = Date.now() + timeoutMs; !(await check());) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }

    async function metric(line: string): Promise<number> {
      const response = await call(app, 'get', '/actuator/prometheus');
      const found = response.text.split('\n').find((text) => text.startsWith(`${line} `));
      return found === undefined ? 0 : Number(found.slice(line.length + 1));
    }
    const readsOnReplica = (): Promise<number> => metric('db_reads_total{pool="replica"}');
    const readsOnPrimary = (): Promise<number> => metric('db_reads_total{pool="primary"}');

    async function labelOf(sku: string): Promise<string> {
      const response = await call(app, 'get', `/v1/products?sku=${sku}`);
      expectStatus(response, 200, `read ${sku}`);
      return (response.body as { label: string }).label;
    }

    async function onReplica(sku: string): Promise<{ label: string } | undefined> {
      const [row] = await clusters.onReplica<{ label: string }>('SELECT label FROM product WHERE sku = $1', [sku]);
      return row;
    }

    async function relabel(sku: string, label: string): Promise<{ label: string; ol: number; pKey: string }> {
      const current = await primary.query<{ p_key: string; ol: number }>(
        'SELECT p_key, ol FROM product WHERE sku = $1',
        [sku],
      );
      const { p_key: pKey, ol } = current.rows[0]!;
      const response = await call(app, 'put', '/v1/products').send({
        pKey,
        ol,
        sku,
        label,
        baseUnit: pc(1),
      });
      expectStatus(response, 200, `relabel ${sku}`);
      return response.body as { label: string; ol: number; pKey: string };
    }

    /**
     * A product the replica has replayed (with its event numbered, the last write of this instance), then replay
     * paused: what changes next exists on the primary only.
     */
    async function productReplayedThenPaused(label: string): Promise<string> {
      const sku = await givenProduct(app, { label });
      await waitFor('the event to be numbered', async () => {
        const { rows } = await primary.query('SELECT 1 FROM event_outbox WHERE position IS NULL LIMIT 1');
        return rows.length === 0;
      });
      const { rows } = await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
      await waitFor('the replica to replay all of it', async () => {
        const [row] = await clusters.onReplica<{ done: boolean }>(
          'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done',
          [rows[0]!.lsn],
        );
        return row?.done === true;
      });
      await clusters.onReplica('SELECT pg_wal_replay_pause()');
      return sku;
    }

    async function resumeReplay(): Promise<void> {
      await clusters.onReplica('SELECT pg_wal_replay_resume()');
      await waitFor('the replica to serve reads again', async () => readReplica.readsGoTo === 'replica');
    }

    it('serves finders and the streamed list from the replica while another instance has written on the primary', async () => {
      const sku = await productReplayedThenPaused('before');
      const onReplicaBefore = await readsOnReplica();

      // Written by another instance (here: straight on the primary): with own-writes this one's reads do not wait for it (D41).
      const { rows } = await primary.query<{ pKey: string }>(
        `UPDATE product SET label = 'after', ol = ol + 1 WHERE sku = $1 RETURNING p_key AS "pKey"`,
        [sku],
      );
      const written = rows[0]!;

      expect(await labelOf(sku)).toBe('before');
      const byKey = await call(app, 'get', `/v1/products/${written.pKey}`);
      expect(byKey.status).toBe(200);
      expect((byKey.body as { label: string }).label).toBe('before');
      const stream = await call(app, 'get', '/v1/products').set('Accept', 'application/json');
      expect(stream.status).toBe(200);
      expect((stream.body as { sku: string; label: string }[]).find((product) => product.sku === sku)?.label).toBe(
        'before',
      );
      expect(await readsOnReplica()).toBe(onReplicaBefore + 3);
      const [service] = await clusters.onReplica<{ connections: number }>(
        "SELECT count(*)::int AS connections FROM pg_stat_activity WHERE application_name = 'inventory-service'",
      );
      expect(service!.connections).toBeGreaterThan(0);

      await resumeReplay();
      await waitFor('the replica to replay the new label', async () => (await onReplica(sku))?.label === 'after');
      expect(await labelOf(sku)).toBe('after');
    });

    it('decides writes on the primary: an optimistic lock and an idempotent retry see what the replica has not replayed', async () => {
      const sku = await productReplayedThenPaused('one');
      const first = await relabel(sku, 'two');
      // The replica still holds the former ol; the lock check reads the primary, so the new ol is the right one.
      const second = await call(app, 'put', '/v1/products').send({
        pKey: first.pKey,
        ol: first.ol,
        sku,
        label: 'three',
        baseUnit: pc(1),
      });
      expect(second.status).toBe(200);
      expect((second.body as { label: string }).label).toBe('three');

      const newSku = `${sku}-idem`;
      const create = (): ReturnType<typeof call> =>
        call(app, 'post', '/v1/products')
          .set('Idempotency-Key', `replica-${newSku}`)
          .send([{ sku: newSku, baseUnit: pc(1) }]);
      const created = await create();
      expect(created.status).toBe(201);
      const retried = await create();
      expect(retried.status).toBe(201);
      expect(retried.headers['idempotent-replayed']).toBe('true');
      expect(retried.headers.location).toBe(created.headers.location);

      await resumeReplay();
    });

    it('sends reads to the primary once the replica lags more than DATABASE_READ_MAX_LAG_MS, and back once it caught up', async () => {
      const sku = await productReplayedThenPaused('old');
      await primary.query(`UPDATE product SET label = 'new', ol = ol + 1 WHERE sku = $1`, [sku]);
      expect(await labelOf(sku)).toBe('old');

      await waitFor('the lag to pass the setting', async () => readReplica.readsGoTo === 'primary', MAX_LAG_MS + 3000);
      const health = await call(app, 'get', '/actuator/health');
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({
        status: 'UP',
        components: {
          readReplica: { status: 'UP', details: { reads: 'primary', state: 'lagging', maxLagMs: MAX_LAG_MS } },
        },
      });
      expect(
        (health.body as { components: { readReplica: { details: { lagMs: number } } } }).components.readReplica.details
          .lagMs,
      ).toBeGreaterThan(MAX_LAG_MS);
      expect(await metric('db_read_replica_in_use')).toBe(0);
      expect(await metric('db_read_replica_lag_seconds')).toBeGreaterThan(MAX_LAG_MS / 1000);
      const onPrimaryBefore = await readsOnPrimary();
      expect(await labelOf(sku)).toBe('new');
      expect(await readsOnPrimary()).toBe(onPrimaryBefore + 1);

      await resumeReplay();
      expect(await metric('db_read_replica_in_use')).toBe(1);
      const onReplicaBefore = await readsOnReplica();
      expect(await labelOf(sku)).toBe('new');
      expect(await readsOnReplica()).toBe(onReplicaBefore + 1);
    });

    it('reads the feed pages the replica has not replayed yet from the primary', async () => {
      interface Page {
        events: { type: string; resource: { sku: string } }[];
        next: string;
      }
      const pageAfter = async (after: string | undefined, wait = 0): Promise<Page> => {
        const query = `${after === undefined ? '?' : `?after=${after}&`}limit=1000&wait=${wait}`;
        const response = await call(app, 'get', `/v1/events${query}`).set('Accept', 'application/json');
        expectStatus(response, 200, 'read the feed');
        return response.body as Page;
      };
      let next: string | undefined;
      for (let page = await pageAfter(next); page.events.length > 0; page = await pageAfter(next)) next = page.next;
      await productReplayedThenPaused('feed');
      const created = await givenProduct(app, { label: 'unreplayed' });

      // A long-polling reader following `next`, as D29 asks, gets the new event although the replica lacks it.
      const seen: string[] = [];
      for (let pages = 0; pages < 5 && !seen.includes(created); pages++) {
        const page = await pageAfter(next, 5);
        seen.push(...page.events.map((event) => event.resource.sku));
        next = page.next;
      }
      expect(seen.at(-1)).toBe(created);
      expect(await onReplica(created)).toBeUndefined();

      await resumeReplay();
    });

    it('answers every read while the replica is stopped mid-run, from the primary, and returns to the replica once it is back', async () => {
      const sku = await givenProduct(app, { label: 'steady' });
      await waitFor('the replica to replay the product', async () => (await onReplica(sku)) !== undefined);
      const statuses: number[] = [];
      let running = true;
      const reader = async (): Promise<void> => {
        while (running) statuses.push((await call(app, 'get', `/v1/products?sku=${sku}`)).status);
      };
      const readers = Array.from({ length: 4 }, reader);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const onReplicaBeforeStop = await readsOnReplica();
      await clusters.stopReplica();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      running = false;
      await Promise.all(readers);

      expect(statuses.length).toBeGreaterThan(20);
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      expect(onReplicaBeforeStop).toBeGreaterThan(0);
      expect(readReplica.readsGoTo).toBe('primary');
      const health = await call(app, 'get', '/actuator/health');
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({
        status: 'UP',
        components: { readReplica: { status: 'DOWN', details: { reads: 'primary', state: 'unreachable' } } },
      });
      const onPrimaryBefore = await readsOnPrimary();
      expect(await labelOf(sku)).toBe('steady');
      expect(await readsOnPrimary()).toBe(onPrimaryBefore + 1);

      await clusters.startReplica();
      await waitFor('the replica to serve reads again', async () => readReplica.readsGoTo === 'replica');
      const onReplicaBefore = await readsOnReplica();
      expect(await labelOf(sku)).toBe('steady');
      expect(await readsOnReplica()).toBe(onReplicaBefore + 1);
    });
  },
);
