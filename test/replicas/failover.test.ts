import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Express } from 'express';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { startEvents, type EventsRuntime } from '../../src/events/runtime.js';
import { testConfig } from '../support/app.js';
import { aProduct } from '../support/builders.js';
import {
  missingReplicaTools,
  startReplicatedClusters,
  type ReplicatedClusters,
} from '../support/replicated-clusters.js';
import { describeWith } from '../support/required-suite.js';
import { toleratePoolTeardown } from '../support/stock-api.js';
import { startTcpRoundRobin, type TcpRoundRobin } from '../support/tcp-round-robin.js';
import { bearer } from '../support/tokens.js';

/**
 * Issue 37 (D41): a primary with a synchronous streaming replica, the service reaching it through an address the
 * test controls (a TCP forwarder, as PgBouncer or a virtual IP would be). The primary is killed under 8 writers,
 * the replica promoted and the address moved: the service follows without a restart.
 */
const WRITERS = 8;

describeWith(
  { kind: 'READ-REPLICA', requireVariable: 'REQUIRE_REPLICA', missing: missingReplicaTools() },
  'failover to a promoted synchronous replica (D41)',
  () => {
    let clusters: ReplicatedClusters;
    let address: TcpRoundRobin;
    let database: Database;
    let events: EventsRuntime;
    let app: Express;
    const logger = pino({ level: 'silent' });

    beforeAll(async () => {
      clusters = await startReplicatedClusters();
      await clusters.onPrimary("ALTER SYSTEM SET synchronous_standby_names = '*'");
      await clusters.onPrimary('SELECT pg_reload_conf()');
      address = await startTcpRoundRobin([Number(new URL(clusters.primaryUrl).port)]);
      const url = `postgres://postgres@127.0.0.1:${address.port}/postgres`;
      const config = testConfig({ DATABASE_URL: url, DB_CONNECT_TIMEOUT_MS: '1000' });
      database = await openDatabase(config, logger);
      toleratePoolTeardown(database.pool);
      await migrate(database.pool, logger);
      events = startEvents(database.pool, config, logger, database.sessionPool);
      app = createApp({ config, pool: database.pool, logger, events });
    }, 60_000);

    afterAll(async () => {
      await events?.stop();
      await database?.close();
      await address?.close();
      await clusters?.destroy();
    });

    it('follows the promoted replica: 503 with Retry-After meanwhile, no acknowledged write lost, events numbered again', async () => {
      const [sync] = await clusters.onPrimary<{ state: string }>('SELECT sync_state AS state FROM pg_stat_replication');
      expect(sync?.state).toBe('sync');
      const acknowledged: string[] = [];
      const refusals: { status: number; retryAfter?: string }[] = [];
      let firstWriteAfterKill: number | undefined;
      let killedAt = 0;
      let running = true;
      const writer = async (): Promise<void> => {
        while (running) {
          const product = aProduct();
          const response = await request(app).post('/v1/products').set('Authorization', bearer()).send(product);
          if (response.status === 201) {
            acknowledged.push(product.sku);
            if (killedAt > 0 && firstWriteAfterKill === undefined) firstWriteAfterKill = Date.now() - killedAt;
          } else {
            refusals.push({ status: response.status, retryAfter: response.headers['retry-after'] });
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        }
      };
      const writers = Array.from({ length: WRITERS }, writer);
      for (const deadline = Date.now() + 20_000; acknowledged.length < 40;) {
        if (Date.now() > deadline)
          throw new Error(
            `only ${acknowledged.length} writes before the kill: ${JSON.stringify(refusals.slice(0, 3))}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const beforeKill = acknowledged.length;

      const pid = Number((await readFile(path.join(clusters.primaryDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
      killedAt = Date.now();
      process.kill(pid, 'SIGKILL');
      const readinessWhileDown = (await request(app).get('/actuator/health/readiness')).status;
      await clusters.onReplica('SELECT pg_promote(true, 30)');
      address.moveTo(Number(new URL(clusters.replicaUrl).port));

      for (const deadline = Date.now() + 30_000; firstWriteAfterKill === undefined && Date.now() < deadline;) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
      running = false;
      await Promise.all(writers);

      expect(beforeKill).toBeGreaterThan(0);
      expect(firstWriteAfterKill).toBeDefined();
      process.stdout.write(
        `failover: first successful write ${firstWriteAfterKill} ms after the kill; ${acknowledged.length} writes ` +
          `acknowledged (${beforeKill} before the kill), ${refusals.length} answered 503\n`,
      );
      expect(readinessWhileDown).toBe(503);
      expect((await request(app).get('/actuator/health/readiness')).status).toBe(200);
      expect(refusals.filter((refusal) => refusal.status !== 503 || refusal.retryAfter === undefined)).toEqual([]);

      const stored = await clusters.onReplica<{ sku: string }>('SELECT sku FROM product WHERE sku = ANY($1)', [
        acknowledged,
      ]);
      expect(stored.length).toBe(acknowledged.length);

      // Numbering resumes by itself: every event of the acknowledged writes gets its position. (Not a count of the
      // default part: an event numbered before the first part could be created stays there, numbered.)
      for (const deadline = Date.now() + 15_000; ;) {
        const [left] = await clusters.onReplica<{ n: number }>(
          'SELECT count(*)::int AS n FROM event_outbox WHERE position IS NULL',
        );
        if (left!.n === 0) break;
        if (Date.now() > deadline) throw new Error(`${left!.n} events left unnumbered after the failover`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }, 90_000);
  },
);
