import type { Express } from 'express';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
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
import { startTcpRoundRobin, type TcpRoundRobin } from '../support/tcp-round-robin.js';

/**
 * Issue 37 (D41): several replicas behind a plain balancer (a Kubernetes Service). Reads stayed stale for a whole
 * 20 s pause while health said "lag 0": the lag probe's one connection reached the replica that kept up, the
 * readers' connections both. Here two replicas sit behind a round-robin TCP balancer and one stops replaying.
 */
const MAX_LAG_MS = 1000;
const READS = 40;

describeWith(
  { kind: 'READ-REPLICA', requireVariable: 'REQUIRE_REPLICA', missing: missingReplicaTools() },
  'two replicas behind a round-robin balancer, one paused (D41)',
  () => {
    let clusters: ReplicatedClusters;
    let balancer: TcpRoundRobin;
    let primary: pg.Pool;
    let readReplica: ReadReplica;
    let events: EventsRuntime;
    let reader: Express;
    let writer: Express;
    const logger = pino({ level: 'silent' });

    beforeAll(async () => {
      clusters = await startReplicatedClusters(2);
      const ports = [clusters.replicaUrl, clusters.moreReplicaUrls[0]!].map((url) => Number(new URL(url).port));
      balancer = await startTcpRoundRobin(ports);
      const config = testConfig({
        DATABASE_URL: clusters.primaryUrl,
        DATABASE_READ_URL: `postgres://postgres@127.0.0.1:${balancer.port}/postgres`,
        DATABASE_READ_MAX_LAG_MS: String(MAX_LAG_MS),
        DB_POOL_MAX: '6',
      });
      primary = createPool(clusters.primaryUrl, config.db, logger);
      await migrate(primary, logger);
      readReplica = await openReadReplica(primary, config.db, config.readReplica!, logger);
      events = startEvents(primary, config, logger);
      reader = createApp({ config, pool: primary, logger, events, readReplica });
      // Another instance writes, so the reader's own writes never decide where its reads go.
      writer = createApp({ config, pool: primary, logger, events });
    }, 60_000);

    afterAll(async () => {
      await events?.stop();
      await readReplica?.close();
      await primary?.end();
      await balancer?.close();
      await clusters?.destroy();
    });

    const onSecondReplica = async (text: string): Promise<void> => {
      const client = new pg.Client({ connectionString: clusters.moreReplicaUrls[0] });
      await client.connect();
      await client.query(text).finally(() => client.end());
    };

    it('never serves a read from the paused replica once it is past DATABASE_READ_MAX_LAG_MS, and still uses the other', async () => {
      const sku = await givenProduct(writer, { label: 'old' });
      await new Promise((resolve) => setTimeout(resolve, 500));
      // Connections of the reader's pool on both replicas, before one of them stops.
      await Promise.all(Array.from({ length: 8 }, () => call(reader, 'get', `/v1/products?sku=${sku}`)));
      await onSecondReplica('SELECT pg_wal_replay_pause()');
      try {
        const { rows } = await primary.query<{ ol: number; pKey: string }>(
          'SELECT ol, p_key AS "pKey" FROM product WHERE sku = $1',
          [sku],
        );
        const put = await call(writer, 'put', '/v1/products').send({ ...rows[0], sku, label: 'new', baseUnit: pc(1) });
        expectStatus(put, 200, 'relabel');
        await new Promise((resolve) => setTimeout(resolve, MAX_LAG_MS + 1500));

        const metric = async (): Promise<number> => {
          const text = (await call(reader, 'get', '/actuator/prometheus')).text;
          const line = text.split('\n').find((entry) => entry.startsWith('db_reads_total{pool="replica"} '));
          return line === undefined ? 0 : Number(line.split(' ')[1]);
        };
        const onReplicaBefore = await metric();
        const labels = await Promise.all(
          Array.from({ length: READS }, async () => {
            const response = await call(reader, 'get', `/v1/products?sku=${sku}`);
            expectStatus(response, 200, 'read');
            return (response.body as { label: string }).label;
          }),
        );
        expect(labels.filter((label) => label !== 'new')).toEqual([]);
        expect(await metric()).toBeGreaterThan(onReplicaBefore);
        expect(balancer.connections.every((count) => count > 0)).toBe(true);
      } finally {
        await onSecondReplica('SELECT pg_wal_replay_resume()');
      }
    }, 60_000);
  },
);
