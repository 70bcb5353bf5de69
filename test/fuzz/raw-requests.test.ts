import type fc from 'fast-check';
import { describe, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { loadApiDocument, operationsOf } from './api-document.js';
import type { RequestTemplate } from './fuzz-client.js';
import { useFuzzHarness } from './fuzz-harness.js';
import { checkProperty, FUZZ_RUNS, fuzzTimeout } from './fuzz-settings.js';
import { evilPathRequest, headerAndQueryRequest, oddBodyRequest, strayRequest } from './raw-requests.js';

const document = await loadApiDocument();
const operations = operationsOf(document);

const ctx = useTestApp();
const harness = useFuzzHarness(ctx);

const FILE = 'test/fuzz/raw-requests.test.ts';
// Each property spans every operation, so it gets the runs of several per-operation properties.
const RUNS = FUZZ_RUNS * 4;

async function fuzz(name: string, requests: fc.Arbitrary<RequestTemplate>): Promise<void> {
  await checkProperty(name, requests, harness.exchange, RUNS, FILE);
  await harness.expectInvariants();
}

describe('fuzzing the HTTP surface around the documented operations', () => {
  it(
    'answers every path parameter spelled as %2F, .., %zz, quotes, SQL or 4 000 characters below 500',
    () => fuzz('evil path parameters', evilPathRequest(document, operations)),
    fuzzTimeout(RUNS),
  );

  it(
    'answers other methods and bent paths below 500 in a documented body',
    () => fuzz('stray methods and paths', strayRequest(document, operations)),
    fuzzTimeout(RUNS),
  );

  it(
    'answers any Content-Type, Content-Encoding and raw body with a documented body below 500',
    () => fuzz('odd content types and bodies', oddBodyRequest(document, operations)),
    fuzzTimeout(RUNS),
  );

  it(
    'answers random Accept headers, query strings, request ids and credentials with a documented body',
    () => fuzz('headers and query strings', headerAndQueryRequest(document, operations)),
    fuzzTimeout(RUNS),
  );
});
