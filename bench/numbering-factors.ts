// Factor experiment: numbering a backlog under one condition at a time. Run from a worktree:
//   npx tsx bench/numbering-factors.ts <variant> [events]; variant words: big (intake-sized events), one (one
// transaction), autovac (autovacuum on for the default part), reader (a FeedReader follows), early (the sequencer
// runs, and plans, before the backlog is written), checkpoint.
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { registerTypeParsers } from '../src/db/type-parsers.js';
import { FeedSignal } from '../src/events/feed-signal.js';
import { Sequencer } from '../src/events/sequencer.js';
import { selectFeedPage } from '../src/events/sql.js';
import { FeedReader } from '../src/events/feed-reader.js';
import { watchCpu } from './cpu-share.js';

const variant = process.argv[2] ?? 'small';
const N = Number(process.argv[3] ?? 200_000);
const logger = pino({ level: 'warn' });
registerTypeParsers();
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'numbering-factors-'));
const server = await startEmbeddedPostgres({ dataDir, port: 0, logger });
const pool = new pg.Pool({ connectionString: server.url, max: 4 });
pool.on('error', () => undefined);
try {
  await migrate(pool, logger);
  const big = variant.includes('big');
  const oneTx = variant.includes('one');
  const autovac = variant.includes('autovac');
  const reader = variant.includes('reader');
  if (!autovac) await pool.query('ALTER TABLE event_outbox_unnumbered SET (autovacuum_enabled = off)');
  await pool.query('ANALYZE event_outbox');
  const resource = big
    ? `json_build_object('pKey', k, 'product', json_build_object('pKey', gen_random_uuid(), 'sku', 'IN-0000011', 'label', 'Article 0000011', 'baseUnit', json_build_object('@class','org.openwms.core.units.api.Piece','unitType',json_build_array('org.openwms.core.units.api.PieceUnit','PC'),'magnitude',1)), 'quantity', json_build_object('@class','org.openwms.core.units.api.Piece','unitType',json_build_array('org.openwms.core.units.api.PieceUnit','PC'),'magnitude',5), 'qtyAvailable', json_build_object('@class','org.openwms.core.units.api.Piece','unitType',json_build_array('org.openwms.core.units.api.PieceUnit','PC'),'magnitude',5), 'state','AVAILABLE','loadUnit',json_build_object('pKey',gen_random_uuid(),'transportUnitBK','IW-0000010','physicalPosition','1','type','PALLET','locked',false),'serialNumber','S1000','ol',0,'createDt','2026-11-29T12:42:56.645Z')`
    : `json_build_object('pKey', k, 'product', json_build_object('sku', 'BACKLOG'), 'quantity', json_build_object('magnitude', 1, 'unit', 'PC'), 'actualLocation', json_build_object('locationId', 'BACKLOG/0000/0000/0000/0000'))`;
  const early = variant.includes('early');
  const events = new pg.Pool({ connectionString: server.url, max: 2 });
  events.on('error', () => undefined);
  const reads = new pg.Pool({ connectionString: server.url, max: 2 });
  const signal = new FeedSignal();
  let sequencer: InstanceType<typeof Sequencer> | undefined;
  let extra = 0;
  if (early) {
    // The sequencer runs (and its statements are prepared and planned) while the default part is nearly empty.
    sequencer = new Sequencer(events, signal, logger, 1_000_000);
    for (let i = 0; i < 8; i++) {
      await pool.query(
        `INSERT INTO event_outbox (type, resource_key, resource) VALUES ('pu.event.created', 'k', '{}')`,
      );
      extra++;
      await signal.waitBeyond(extra - 1, 5000);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const per = oneTx ? N : 100_000;
  const fillStart = performance.now();
  for (let first = 1; first <= N; first += per) {
    const last = Math.min(N, first + per - 1);
    await pool.query(
      `INSERT INTO event_outbox (type, resource_key, request_id, resource)
       SELECT 'pu.event.created', k, 'backlog', ${resource}
         FROM (SELECT gen_random_uuid()::text AS k FROM generate_series($1::int, $2::int)) g`,
      [first, last],
    );
  }
  const { rows: size } = await pool.query(`SELECT pg_total_relation_size('event_outbox_unnumbered') AS b`);
  console.error(
    `filled ${N} in ${((performance.now() - fillStart) / 1000).toFixed(1)} s, default part ${(size[0].b / 1e6).toFixed(0)} MB`,
  );
  if (variant.includes('checkpoint')) await pool.query('CHECKPOINT');
  let stopFollow: (() => void) | undefined;
  let readEvents = 0;
  let readAllAt: number | undefined;
  if (reader) {
    const feed = new FeedReader(
      (after: number | undefined, limit: number) => selectFeedPage(reads, after, limit),
      signal,
      logger,
    );
    feed.onAdvanced((through: number) => {
      readEvents = through;
      if (through >= N + extra) readAllAt ??= performance.now();
    });
    stopFollow = feed.follow(0);
  }
  const cpu = watchCpu();
  const started = performance.now();
  sequencer ??= new Sequencer(events, signal, logger, 1_000_000);
  const marks: string[] = [];
  let lastHead = 0;
  let lastT = started;
  const timer = setInterval(() => {
    const t = performance.now();
    marks.push(`${((t - started) / 1000).toFixed(0)}s:${Math.round((signal.head - lastHead) / ((t - lastT) / 1000))}`);
    lastHead = signal.head;
    lastT = t;
  }, 2000);
  await signal.waitBeyond(N + extra - 1, 30 * 60_000);
  const numberedAt = performance.now();
  const seconds = (numberedAt - started) / 1000;
  const readAtNumbering = readEvents;
  while (reader && readAllAt === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
  // CPU of this process (the sequencer and the reader) and of the embedded PostgreSQL, per event numbered.
  const share = cpu.stop();
  const cpuSeconds = ((readAllAt ?? numberedAt) - started) / 1000;
  const perEvent = (percent: number | undefined): number =>
    Number(((((percent ?? 0) / 100) * cpuSeconds * 1e6) / N).toFixed(2));
  clearInterval(timer);
  await sequencer.stop();
  stopFollow?.();
  console.log(
    JSON.stringify({
      variant,
      N,
      seconds: Number(seconds.toFixed(2)),
      perSecond: Math.round(N / seconds),
      load: os.loadavg()[0],
      readEvents: readAtNumbering,
      readerBehindSeconds: readAllAt === undefined ? undefined : Number(((readAllAt - numberedAt) / 1000).toFixed(2)),
      processMicrosPerEvent: perEvent(share?.loadGenerator),
      postgresMicrosPerEvent: perEvent(share?.postgres),
      otherPercent: Math.round(share?.other ?? 0),
      marks: marks.join(' '),
    }),
  );
  await events.end();
  await reads.end();
} finally {
  await pool.end();
  await server.stop();
}
