import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Reads } from '../db/read-replica.js';
import type { EventsRuntime } from '../events/runtime.js';
import type { Routes } from './routing.js';
import type { JsonArrayStreams } from './stream.js';
import type { OutgoingStreams } from './stream-writer.js';
import type { StreamedImports } from './streamed-imports.js';

/** What a feature's route factory receives: the route table to add to and the shared dependencies. */
export interface FeatureDependencies {
  /** The primary: writes (withTransaction), the reads a write decides on, and reads of the caller's own write. */
  readonly pool: pg.Pool;
  /** Issue 17: reads that may be served by the read replica (while it keeps up and has what they must see, D41). */
  readonly reads: Reads;
  readonly config: Config;
  readonly events: EventsRuntime;
  /** The instance's streamed lists, bounded together. */
  readonly streams: JsonArrayStreams;
  /** D39: every outgoing stream's writer (SSE, feed pages, lists): bounded, cut when stalled, ended at shutdown. */
  readonly outgoing: OutgoingStreams;
  /** For background work a feature keeps (the feed's reader). */
  readonly logger: Logger;
  /** The instance's streamed (NDJSON) imports, bounded together. */
  readonly imports: StreamedImports;
}

export type AddFeatureRoutes = (routes: Routes, dependencies: FeatureDependencies) => void;
