import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { withTransaction } from '../src/db/tx.js';
import { appendEvents, EVENTS_PER_STATEMENT, type NewEvent } from '../src/events/outbox.js';
import { createOutboxParts } from '../src/events/partitions.js';
import { EVENTS_PER_RUN } from '../src/events/sequencer.js';
import { sequenceCommittedEvents } from '../src/events/sql.js';
import { appendMovements, type MovementEntry } from '../src/ledger/sql.js';
import { startProgress, step } from './progress.js';
import { productSku } from './seed.js';

const UNNUMBERED_PART = 'event_outbox_unnumbered';
// Set-based, as the service appends a change's ledger rows (one statement); 10,000 keeps a statement's arrays small.
const LEDGER_ROWS_PER_STATEMENT = 10_000;
const PRODUCTS = 1000;

/** Bytes per row of what scenario 17 wrote; the report scales them to 1,000,000 rows. */
export interface WalAndSpace {
  readonly rows: number;
  /** The mean JSON text of the events' resource (a PackagingUnit's, cut short as in bench/notes.md's psql runs). */
  readonly resourceBytes: number;
  readonly eventAppendedWal: number;
  readonly eventNumberedWal: number;
  /** In the parts of their positions (heap, TOAST, position index), after the default part is vacuumed. */
  readonly eventSpace: number;
  readonly ledgerWal: number;
  readonly ledgerSpace: number;
  readonly seconds: { readonly append: number; readonly number: number; readonly ledger: number };
}

/** The server's WAL position in bytes: differences count the whole server's WAL, little of it not ours here. */
async function walPosition(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ bytes: number }>(
    "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS bytes",
  );
  return rows[0]!.bytes;
}

/** Heap, TOAST and indexes of the table's parts, leaving out `except`. */
async function partsSize(pool: pg.Pool, table: string, except = ''): Promise<number> {
  const { rows } = await pool.query<{ bytes: number }>(
    `SELECT COALESCE(sum(pg_total_relation_size(relid)), 0)::float8 AS bytes
       FROM pg_partition_tree($1::regclass) WHERE isleaf AND relid::regclass::text <> $2`,
    [table, except],
  );
  return rows[0]!.bytes;
}

/** A PackagingUnit's `pu.event.changed`, its resource cut to about 190 B of JSON as in bench/notes.md's psql runs. */
function unitChanged(n: number): NewEvent {
  const pKey = randomUUID();
  return {
    type: 'pu.event.changed',
    key: pKey,
    resource: {
      pKey,
      product: { sku: productSku('P', (n % PRODUCTS) + 1) },
      quantity: { magnitude: 10, unitType: 'PC' },
      state: 'AVAILABLE',
      loadUnit: { transportUnitBK: `TU${String(n).padStart(8, '0')}` },
    },
  };
}

function unitMoved(n: number): MovementEntry {
  return {
    packagingUnitPKey: randomUUID(),
    productId: (n % PRODUCTS) + 1,
    kind: 'MOVE',
    baseCode: 'PC',
    qtyBefore: '10',
    qtyAfter: '10',
    reservedBefore: '0',
    reservedAfter: '0',
    from: { transportUnitBK: `TU${String(n).padStart(8, '0')}`, loadUnitPosition: 'LEFT' },
    to: { locationId: `L-${String((n % 1000) + 1).padStart(4, '0')}` },
  };
}

/** Runs `write(first, count)` over `rows` rows in batches, with a progress bar. */
async function inBatches(
  label: string,
  rows: number,
  batch: number,
  write: (first: number, count: number) => Promise<unknown>,
): Promise<void> {
  const progress = startProgress(label, rows);
  for (let first = 0; first < rows; first += batch) {
    await write(first, Math.min(batch, rows - first));
    progress.update(Math.min(rows, first + batch));
  }
  progress.finish();
}

/** Numbers the `count` events waiting (none else waits here) in the sequencer's runs. */
async function numberEvents(pool: pg.Pool, count: number): Promise<void> {
  for (let left = count; left > 0; left -= EVENTS_PER_RUN) {
    const { assigned } = await withTransaction(pool, (tx) => sequenceCommittedEvents(tx, EVENTS_PER_RUN));
    if (assigned !== Math.min(left, EVENTS_PER_RUN)) throw new Error(`scenario 17: a run numbered ${assigned} events`);
  }
}

/**
 * bench/notes.md's psql method as code, on a database no service instance writes to. `rows` events, 10,000 a
 * transaction with the service's statement, each batch numbered right after it by the sequencer's statement in its
 * runs of 5,000, as the service numbers moments after a commit (numbering a whole backlog at the end would log the
 * default part's pages again after a checkpoint, which the service's numbering seldom does); WAL is read around
 * each statement. Then `rows` ledger rows (MOVEs with both places), 10,000 a statement. A CHECKPOINT before each.
 */
export async function measureWalAndSpace(pool: pg.Pool, rows: number, partitionSize: number): Promise<WalAndSpace> {
  step(`scenario 17: WAL and space of ${rows.toLocaleString('en-US')} events and ledger rows`);
  // Parts for the positions to come, as the sequencer creates them before it numbers.
  await createOutboxParts(pool, partitionSize, rows);
  const eventsBefore = await partsSize(pool, 'event_outbox', UNNUMBERED_PART);
  let resourceBytes = 0;
  const wal = { appended: 0, numbered: 0 };
  const ms = { append: 0, number: 0 };
  await pool.query('CHECKPOINT');
  await inBatches('appending and numbering events', rows, EVENTS_PER_STATEMENT, async (first, count) => {
    const events = Array.from({ length: count }, (_, i) => unitChanged(first + i));
    resourceBytes += events.reduce((sum, event) => sum + Buffer.byteLength(JSON.stringify(event.resource)), 0);
    const [walAtStart, started] = [await walPosition(pool), performance.now()];
    await withTransaction(pool, (tx) => appendEvents(tx, events, randomUUID()));
    const [walAppended, appended] = [await walPosition(pool), performance.now()];
    await numberEvents(pool, count);
    const [walNumbered, numbered] = [await walPosition(pool), performance.now()];
    wal.appended += walAppended - walAtStart;
    wal.numbered += walNumbered - walAppended;
    ms.append += appended - started;
    ms.number += numbered - appended;
  });
  await pool.query(`VACUUM ${UNNUMBERED_PART}`);
  const eventSpace = (await partsSize(pool, 'event_outbox', UNNUMBERED_PART)) - eventsBefore;

  const ledgerBefore = await partsSize(pool, 'stock_movement');
  await pool.query('CHECKPOINT');
  const [walBeforeLedger, ledgerStarted] = [await walPosition(pool), performance.now()];
  await inBatches('appending ledger rows', rows, LEDGER_ROWS_PER_STATEMENT, (first, count) => {
    const entries = Array.from({ length: count }, (_, i) => unitMoved(first + i));
    return withTransaction(pool, (tx) =>
      appendMovements(tx, entries, { subject: 'bench-scenario-17', requestId: randomUUID() }),
    );
  });
  const ledgerWal = (await walPosition(pool)) - walBeforeLedger;
  const ledgerSeconds = (performance.now() - ledgerStarted) / 1000;
  const ledgerSpace = (await partsSize(pool, 'stock_movement')) - ledgerBefore;

  return {
    rows,
    resourceBytes: resourceBytes / rows,
    eventAppendedWal: wal.appended / rows,
    eventNumberedWal: wal.numbered / rows,
    eventSpace: eventSpace / rows,
    ledgerWal: ledgerWal / rows,
    ledgerSpace: ledgerSpace / rows,
    seconds: { append: ms.append / 1000, number: ms.number / 1000, ledger: ledgerSeconds },
  };
}
