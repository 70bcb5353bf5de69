import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import type { ApiDocument, Operation } from './api-document.js';
import { useFuzzHarness } from './fuzz-harness.js';
import { checkProperty, fuzzTimeout } from './fuzz-settings.js';
import { operationRequest } from './operation-requests.js';

/**
 * One property per documented operation, against the file's own seeded database. The operations are split over
 * two files so that vitest runs the halves in parallel and each database grows only with its half.
 */
export function describeOperationFuzzing(document: ApiDocument, operations: readonly Operation[], file: string): void {
  const ctx = useTestApp();
  const harness = useFuzzHarness(ctx);

  describe('fuzzing every operation of /v3/api-docs', () => {
    it('fuzzes operations of the document the running service serves', async () => {
      const served = await request(ctx.app).get('/v3/api-docs');

      expect(served.body).toEqual(document);
      expect(operations.length).toBeGreaterThan(0);
    });

    it.each(operations.map((operation) => [operation.name, operation] as const))(
      '%s answers valid, boundary and malformed requests below 500, in a documented body, keeping the invariants',
      async (name, operation) => {
        await checkProperty(name, operationRequest(document, operation), harness.exchange, undefined, file);

        await harness.expectInvariants();
      },
      fuzzTimeout(),
    );
  });
}
