import type { Express } from 'express';
import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { migrate } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { openReadReplica, type ReadReplica } from '../../src/db/read-replica.js';
import { startEvents, type EventsRuntime } from '../../src/events/runtime.js';
import { givenReservation } from '../reservations/reservation-api.js';
import { testConfig, type TestContext } from '../support/app.js';
import { aProduct } from '../support/builders.js';
import {
  missingReplicaTools,
  startReplicatedClusters,
  type ReplicatedClusters,
} from '../support/replicated-clusters.js';
import { describeWith } from '../support/required-suite.js';
import { call, expectStatus, pc } from '../support/stock-api.js';

/**
 * Issue 37 (D41): with a replica 3 s behind, `GET /allocation/reservations/{id}` — the link the allocation itself
 * returned — answered 404, and a resource read after its PUT showed the former data. Replay is paused here, so the
 * replica stays behind for as long as a test wants.
 */
interface Instance {
  readonly app: Express;
  readonly readReplica: ReadReplica;
  readonly events: EventsRuntime;
}

describeWith(
  { kind: 'READ-REPLICA', requireVariable: 'REQUIRE_REPLICA', missing: missingReplicaTools() },
  'reading your own writes with a read replica (D41)',
  () => {
    let clusters: ReplicatedClusters;
    let primary: pg.Pool;
    const instances: Instance[] = [];
    const logger = pino({ level: 'silent' });

    beforeAll(async () => {
      clusters = await startReplicatedClusters();
      const config = testConfig({
        DATABASE_URL: clusters.primaryUrl,
        DATABASE_READ_URL: clusters.replicaUrl,
        DATABASE_READ_MAX_LAG_MS: '60000',
      });
      const ownWritesConfig = testConfig({
        DATABASE_URL: clusters.primaryUrl,
        DATABASE_READ_URL: clusters.replicaUrl,
        DATABASE_READ_MAX_LAG_MS: '60000',
        DATABASE_READ_AFTER: 'own-writes',
      });
      primary = createPool(clusters.primaryUrl, config.db, logger);
      await migrate(primary, logger);
      // Instances on one primary and one replica, as behind a balancer without sticky sessions: two with the
      // default DATABASE_READ_AFTER (any-write), a third with own-writes.
      for (const settings of [config, config, ownWritesConfig]) {
        const readReplica = await openReadReplica(primary, settings.db, settings.readReplica!, logger);
        const events = startEvents(primary, settings, logger);
        const app = createApp({ config: settings, pool: primary, logger, events, readReplica });
        instances.push({ app, readReplica, events });
      }
    }, 60_000);

    afterEach(async () => {
      await clusters.onReplica('SELECT pg_wal_replay_resume()').catch(() => undefined);
    });

    afterAll(async () => {
      for (const { events, readReplica } of instances) {
        await events.stop();
        await readReplica.close();
      }
      await primary?.end();
      await clusters?.destroy();
    });

    const replicaHas = async (sku: string): Promise<boolean> =>
      (await clusters.onReplica('SELECT 1 FROM product WHERE sku = $1', [sku])).length > 0;

    async function pauseReplayOnceReplayed(sku: string): Promise<void> {
      for (const deadline = Date.now() + 10_000; !(await replicaHas(sku));) {
        if (Date.now() > deadline) throw new Error('the replica never replayed the product');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await clusters.onReplica('SELECT pg_wal_replay_pause()');
    }

    it('answers the Location of a 201 with the created Product, although the replica has not replayed it', async () => {
      const { app } = instances[0]!;
      const seed = aProduct();
      expectStatus(await call(app, 'post', '/v1/products').send(seed), 201, 'seed');
      await pauseReplayOnceReplayed(seed.sku);

      const product = aProduct({ label: 'fresh' });
      const created = await call(app, 'post', '/v1/products').send(product);
      expect(created.status).toBe(201);
      const read = await call(app, 'get', new URL(created.headers.location!).pathname);
      expect(read.status).toBe(200);
      expect((read.body as { sku: string; label: string }).sku).toBe(product.sku);
      expect(await replicaHas(product.sku)).toBe(false);
    });

    /**
     * A Product labelled 'before' that the replica has replayed, then replay paused and the Product relabelled
     * 'after' through `writer`: the replica holds the former label for as long as the test wants.
     */
    async function relabelledBehindReplica(writer: Express): Promise<{ sku: string; path: string }> {
      const product = aProduct({ label: 'before' });
      const created = await call(writer, 'post', '/v1/products').send(product);
      expect(created.status).toBe(201);
      await pauseReplayOnceReplayed(product.sku);
      const path = new URL(created.headers.location!).pathname;
      const stored = (await call(writer, 'get', path)).body as { pKey: string; ol: number };
      const put = await call(writer, 'put', '/v1/products').send({
        pKey: stored.pKey,
        ol: stored.ol,
        sku: product.sku,
        label: 'after',
        baseUnit: pc(1),
      });
      expect(put.status).toBe(200);
      return { sku: product.sku, path };
    }

    const labelOf = async (app: Express, path: string): Promise<string> =>
      ((await call(app, 'get', path)).body as { label: string }).label;

    it('answers a PUT Product with its new label at once, not the copy the replica holds', async () => {
      const { app } = instances[0]!;
      const { sku, path } = await relabelledBehindReplica(app);
      expect(await labelOf(app, path)).toBe('after');
      expect(await labelOf(app, `/v1/products?sku=${sku}`)).toBe('after');
    });

    it("answers a Product PUT on another instance with its new label, not the replica's copy", async () => {
      const [writer, reader] = instances as [Instance, Instance];
      const { sku, path } = await relabelledBehindReplica(writer.app);
      expect(await labelOf(reader.app, path)).toBe('after');
      expect(await labelOf(reader.app, `/v1/products?sku=${sku}`)).toBe('after');
      expect(await clusters.onReplica('SELECT label FROM product WHERE sku = $1', [sku])).toEqual([
        { label: 'before' },
      ]);
    });

    it('with DATABASE_READ_AFTER=own-writes, lets the replica answer a read after another instance wrote', async () => {
      const [writer, , ownWrites] = instances as [Instance, Instance, Instance];
      const { sku } = await relabelledBehindReplica(writer.app);
      expect(await labelOf(ownWrites.app, `/v1/products?sku=${sku}`)).toBe('before');
    });

    it('answers the reservation an allocation returned, on this instance and on another', async () => {
      const [first, second] = instances as [Instance, Instance];
      const seed = aProduct();
      expectStatus(await call(first.app, 'post', '/v1/products').send(seed), 201, 'seed');
      await pauseReplayOnceReplayed(seed.sku);

      const { reservationId } = await givenReservation({ app: first.app } as TestContext, [10], 3);
      for (const { app } of [first, second]) {
        const read = await call(app, 'get', `/allocation/reservations/${reservationId}`);
        expect(read.status).toBe(200);
        expect((read.body as { reservationId: string }).reservationId).toBe(reservationId);
      }
      const onReplica = await clusters.onReplica('SELECT 1 FROM reservation WHERE reservation_id = $1::uuid', [
        reservationId,
      ]);
      expect(onReplica).toEqual([]);
    });

    it('still serves reads from the replica once it has replayed every write', async () => {
      const { app, readReplica } = instances[1]!;
      const product = aProduct({ label: 'quiet' });
      const created = await call(instances[0]!.app, 'post', '/v1/products').send(product);
      expect(created.status).toBe(201);
      for (const deadline = Date.now() + 10_000; !(await replicaHas(product.sku));) {
        if (Date.now() > deadline) throw new Error('the replica never replayed the product');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const metric = async (): Promise<number> => {
        const text = (await call(app, 'get', '/actuator/prometheus')).text;
        const line = text.split('\n').find((entry) => entry.startsWith('db_reads_total{pool="replica"} '));
        return line === undefined ? 0 : Number(line.split(' ')[1]);
      };
      expect(readReplica.readsGoTo).toBe('replica');
      const before = await metric();
      expect((await call(app, 'get', `/v1/products?sku=${product.sku}`)).status).toBe(200);
      expect(await metric()).toBe(before + 1);
    });
  },
);
