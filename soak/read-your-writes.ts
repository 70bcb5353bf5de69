import { randomUUID } from 'node:crypto';
import { sleep } from '../test/reliability/harness.js';
import { pc } from '../test/support/stock-api.js';

/**
 * Issue 37 (D41): besides the load, Products written on one instance and read back at once, straight from that
 * instance and from the next one (no proxy between, so that the instance is known). A 404 or an older label from
 * either breaks D41's promise (with DATABASE_READ_AFTER=any-write, the default the soak's instances run with).
 */
export interface ReadYourWritesTally {
  /** Products answered 201, by SKU: each must be stored. */
  readonly created: string[];
  /** Status counts by step (create, read own, read other, relabel, …), faults' 503s and 502s included. */
  readonly statuses: Record<string, Record<string, number>>;
  /** Requests that got no answer (an instance down), by step. */
  readonly unanswered: Record<string, number>;
  ownReads404: number;
  otherReads404: number;
  /** Reads after a relabel that still showed the old label. */
  ownStale: number;
  otherStale: number;
  relabelled: number;
  readonly samples: string[];
}

export interface ReadYourWrites {
  readonly tally: ReadYourWritesTally;
  stop(): Promise<void>;
}

const REQUEST_LIMIT_MS = 30_000;
/** After a refusal or an unanswered request: a fault is in progress; no need to hammer. */
const BACKOFF_MS = 200;
const MAX_SAMPLES = 20;

export function startReadYourWrites(options: {
  /** The current instances' base URLs. */
  urls: () => readonly string[];
  authorization: string;
  loops: number;
}): ReadYourWrites {
  const tally: ReadYourWritesTally = {
    created: [],
    statuses: {},
    unanswered: {},
    ownReads404: 0,
    otherReads404: 0,
    ownStale: 0,
    otherStale: 0,
    relabelled: 0,
    samples: [],
  };
  let running = true;
  const sample = (line: string): void => {
    if (tally.samples.length < MAX_SAMPLES) tally.samples.push(line);
  };
  const send = async (
    step: string,
    url: string,
    init: { method?: string; body?: unknown } = {},
  ): Promise<{ status: number; location: string | null; body: Record<string, unknown> | undefined } | undefined> => {
    try {
      const response = await fetch(url, {
        method: init.method ?? 'GET',
        headers: {
          authorization: options.authorization,
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: AbortSignal.timeout(REQUEST_LIMIT_MS),
      });
      const text = await response.text();
      const counts = (tally.statuses[step] ??= {});
      counts[response.status] = (counts[response.status] ?? 0) + 1;
      const body = response.status === 200 && text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
      return { status: response.status, location: response.headers.get('location'), body };
    } catch {
      tally.unanswered[step] = (tally.unanswered[step] ?? 0) + 1;
      return undefined;
    }
  };

  const cycle = async (turn: number): Promise<boolean> => {
    const urls = options.urls();
    const own = urls[turn % urls.length]!;
    const other = urls[(turn + 1) % urls.length]!;
    const sku = `RYW-${randomUUID()}`;
    const created = await send('create', `${own}/v1/products`, {
      method: 'POST',
      body: { sku, baseUnit: pc(1), label: 'first' },
    });
    if (created?.status !== 201 || !created.location) return false;
    tally.created.push(sku);
    const resource = new URL(created.location, own).pathname;
    const read = async (step: string, base: string, label: string): Promise<Record<string, unknown> | undefined> => {
      const answer = await send(step, `${base}${resource}`);
      if (answer?.status === 404) {
        if (base === own) tally.ownReads404++;
        else tally.otherReads404++;
        sample(`${step} ${sku} on ${base}: 404`);
      }
      if (answer?.body && answer.body.label !== label) {
        if (base === own) tally.ownStale++;
        else tally.otherStale++;
        sample(`${step} ${sku} on ${base}: label ${String(answer.body.label)}, written ${label}`);
      }
      return answer?.body;
    };
    const product = await read('read own after create', own, 'first');
    await read('read other after create', other, 'first');
    if (!product) return false;
    const relabel = await send('relabel', `${own}/v1/products`, {
      method: 'PUT',
      body: { pKey: product.pKey, ol: product.ol, sku, baseUnit: pc(1), label: 'second' },
    });
    if (relabel?.status !== 200) return false;
    tally.relabelled++;
    await read('read own after relabel', own, 'second');
    await read('read other after relabel', other, 'second');
    return true;
  };

  const loop = async (first: number): Promise<void> => {
    for (let turn = first; running; turn += options.loops) {
      if (!(await cycle(turn))) await sleep(BACKOFF_MS);
    }
  };
  const loops = Array.from({ length: options.loops }, (_, index) => loop(index));
  return {
    tally,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}
