import type pg from 'pg';
import type { Config } from '../config.js';
import type { EventsRuntime } from '../events/runtime.js';
import type { Routes } from './routing.js';
import type { JsonArrayStreams } from './stream.js';

/** What a feature's route factory receives: the route table to add to and the shared dependencies. */
export interface FeatureDependencies {
  readonly pool: pg.Pool;
  readonly config: Config;
  readonly events: EventsRuntime;
  /** The instance's streamed lists, bounded together. */
  readonly streams: JsonArrayStreams;
}

export type AddFeatureRoutes = (routes: Routes, dependencies: FeatureDependencies) => void;
