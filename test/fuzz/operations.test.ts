import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { loadApiDocument, operationsOf } from './api-document.js';
import { useFuzzHarness } from './fuzz-harness.js';
import { checkProperty, fuzzTimeout } from './fuzz-settings.js';
import { operationRequest } from './operation-requests.js';

// The operations must be known when vitest collects the tests, before the file's database exists.
const document = await loadApiDocument();
const operations = operationsOf(document);

const FILE = 'test/fuzz/operations.test.ts';
const ctx = useTestApp();
const harness = useFuzzHarness(ctx);

describe('fuzzing every operation of /v3/api-docs', () => {
  it('fuzzes the operations the running service documents', async () => {
    const served = await request(ctx.app).get('/v3/api-docs');

    expect(served.body).toEqual(document);
    expect(operations.length).toBeGreaterThanOrEqual(40);
  });

  it.each(operations.map((operation) => [operation.name, operation] as const))(
    '%s answers valid, boundary and malformed requests below 500, in a documented body, keeping the invariants',
    async (name, operation) => {
      await checkProperty(name, operationRequest(document, operation), harness.exchange, undefined, FILE);

      await harness.expectInvariants();
    },
    fuzzTimeout(),
  );
});
