import { loadApiDocument, operationsOf } from './api-document.js';
import { describeOperationFuzzing } from './operation-suite.js';

// The operations must be known when vitest collects the tests, before the file's database exists.
const document = await loadApiDocument();
const operations = operationsOf(document);

describeOperationFuzzing(
  document,
  operations.filter((_operation, index) => index % 2 === 0),
  'test/fuzz/operations-first-half.test.ts',
);
