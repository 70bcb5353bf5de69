import { expect, it } from 'vitest';
import { loadApiDocument, operationsOf } from './api-document.js';
import { describeOperationFuzzing } from './operation-suite.js';

// The operations must be known when vitest collects the tests, before the file's database exists.
const document = await loadApiDocument();
const operations = operationsOf(document);

describeOperationFuzzing(
  document,
  operations.filter((_operation, index) => index % 2 === 1),
  'test/fuzz/operations-second-half.test.ts',
);

it('reads every operation of the service, 40 and more, from its own /v3/api-docs', () => {
  expect(operations.length).toBeGreaterThanOrEqual(40);
});
