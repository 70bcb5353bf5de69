import type pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';
import type { TestContext } from '../support/app.js';
import { takeMismatches } from '../support/contract.js';
import { allViolations } from '../support/stock-invariants.js';
import {
  describeRequest,
  FuzzClient,
  materialize,
  type ReceivedResponse,
  type RequestTemplate,
  type SentRequest,
} from './fuzz-client.js';
import { excerpt } from './json-text.js';
import { KeyPool, resourceKindOf, type KeyKind } from './known-keys.js';
import { contractProblems } from './response-contract.js';
import { seedWarehouse } from './warehouse-seed.js';

export interface FuzzHarness {
  readonly keys: KeyPool;
  /** Sends one generated request and throws, with the request and response, when anything breaks the contract. */
  exchange(template: RequestTemplate): Promise<ReceivedResponse>;
  /** The stock invariants and an unpolluted Object.prototype, as a test assertion. */
  expectInvariants(): Promise<void>;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const PROTOTYPES = { Object: Object.prototype, Array: Array.prototype, Function: Function.prototype };

/** Every own property of the shared prototypes with its value: the app runs in this process, so its pollution would show. */
function prototypeSnapshot(): Map<string, unknown> {
  const snapshot = new Map<string, unknown>();
  for (const [name, prototype] of Object.entries(PROTOTYPES)) {
    for (const key of Reflect.ownKeys(prototype)) {
      const descriptor = Object.getOwnPropertyDescriptor(prototype, key);
      snapshot.set(`${name}.prototype.${String(key)}`, descriptor?.value ?? descriptor?.get);
    }
  }
  return snapshot;
}

function pollution(before: ReadonlyMap<string, unknown>): string[] {
  const now = prototypeSnapshot();
  const added = [...now.keys()].filter((key) => !before.has(key));
  const changed = [...before.keys()].filter((key) => now.get(key) !== before.get(key));
  return [...added, ...changed].map((key) => `${key} was polluted`);
}

function learnFrom(keys: KeyPool, sent: SentRequest, response: ReceivedResponse): void {
  if (response.status >= 300) return;
  // A created Product answers without a body: its SKUs are only in the request.
  if (sent.method === 'POST' && sent.path === '/v1/products' && sent.body && sent.body.length < 100_000) {
    const products = parsedOrUndefined(sent.body);
    for (const product of Array.isArray(products) ? products : [products]) {
      keys.add('sku', (product as { sku?: unknown } | undefined)?.sku);
    }
  }
  const location = String(response.headers.location ?? '');
  const created = /\/v1\/(products|packaging-units)\/([^/?]+)$/.exec(location);
  if (created) keys.add(created[1] === 'products' ? 'productPKey' : 'unitPKey', created[2]);
  if (!/json/.test(String(response.headers['content-type'] ?? '')) || response.text.length > 2_000_000) return;
  keys.harvest(parsedOrUndefined(response.text), resourceKindOf(sent.path));
}

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const STILL_EXISTING: readonly (readonly [KeyKind, string])[] = [
  ['sku', 'SELECT sku AS key FROM product WHERE sku = ANY($1::text[])'],
  ['productPKey', 'SELECT p_key::text AS key FROM product WHERE p_key::text = ANY($1::text[])'],
  ['unitPKey', 'SELECT p_key::text AS key FROM packaging_unit WHERE p_key::text = ANY($1::text[])'],
  ['erpCode', 'SELECT erp_code AS key FROM location WHERE erp_code = ANY($1::text[])'],
];

/** After a successful write: keys of deleted data would only lead to 404s. */
async function forgetWhatIsGone(pool: pg.Pool, keys: KeyPool): Promise<void> {
  for (const [kind, sql] of STILL_EXISTING) {
    const { rows } = await pool.query<{ key: string }>(sql, [keys.all(kind)]);
    keys.retain(kind, new Set(rows.map((row) => row.key)));
  }
}

/**
 * The file's fuzzing fixture on top of useTestApp: a seeded warehouse, one loopback server for the app, the key
 * pool, and the checks every response and every successful write must pass.
 */
export function useFuzzHarness(ctx: TestContext): FuzzHarness {
  const keys = new KeyPool();
  let client: FuzzClient | undefined;
  let prototypes = new Map<string, unknown>();

  beforeAll(async () => {
    prototypes = prototypeSnapshot();
    await seedWarehouse(ctx, keys);
    client = await FuzzClient.start(ctx.app);
  });
  const statuses = new Map<string, Map<number, number>>();
  afterAll(async () => {
    await client?.close();
    // FUZZ_STATS=1 shows how far the generated requests got: the statuses per operation.
    if (process.env.FUZZ_STATS) {
      for (const [name, counts] of statuses) {
        const tally = [...counts].sort(([a], [b]) => a - b).map(([status, n]) => `${status}×${n}`);
        process.stderr.write(`${name}: ${tally.join(' ')}\n`);
      }
    }
  });

  const exchange = async (template: RequestTemplate): Promise<ReceivedResponse> => {
    if (!client) throw new Error('the fuzz harness is not started');
    const sent = materialize(template, keys);
    let response: ReceivedResponse;
    try {
      response = await client.send(sent, template.chunked);
    } catch (error) {
      throw new Error(`no response (${(error as Error).message}) to\n${describeRequest(sent)}`, { cause: error });
    }
    const counts = statuses.get(`${template.method} ${template.path}`) ?? new Map<number, number>();
    counts.set(response.status, (counts.get(response.status) ?? 0) + 1);
    statuses.set(`${template.method} ${template.path}`, counts);
    // The response contract check (test/support/contract.ts) saw this answer too: its findings fail this request,
    // so that fast-check shrinks them like any other.
    const undocumented = (await takeMismatches()).map((mismatch) => mismatch.text);
    const problems = [...contractProblems(sent, response), ...undocumented, ...pollution(prototypes)];
    if (problems.length === 0 && WRITES.has(sent.method) && response.status < 300) {
      problems.push(...(await allViolations(ctx.db.pool)).map((line) => `stock invariant broken: ${line}`));
    }
    if (problems.length > 0) {
      const headers = ['content-type', 'x-request-id', 'allow', 'www-authenticate']
        .filter((name) => response.headers[name] !== undefined)
        .map((name) => `${name}: ${String(response.headers[name])}`);
      throw new Error(
        [
          problems.join('; '),
          '--- request',
          describeRequest(sent),
          `--- response ${response.status}`,
          ...headers,
          excerpt(response.text, 1_000),
        ].join('\n'),
      );
    }
    learnFrom(keys, sent, response);
    if (WRITES.has(sent.method) && response.status < 300) await forgetWhatIsGone(ctx.db.pool, keys);
    return response;
  };

  const expectInvariants = async (): Promise<void> => {
    expect(await allViolations(ctx.db.pool)).toEqual([]);
    expect(pollution(prototypes)).toEqual([]);
  };

  return { keys, exchange, expectInvariants };
}
