import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { apiDocumentText, OPENAPI_FILE, servedApiDocument } from '../support/contract-document.js';

/** The first line (1-based) where the two texts differ, or 0 when they are the same. */
function firstDifferentLine(expected: string, actual: string): number {
  const expectedLines = expected.split('\n');
  const actualLines = actual.split('\n');
  const length = Math.max(expectedLines.length, actualLines.length);
  for (let index = 0; index < length; index += 1) {
    if (expectedLines[index] !== actualLines[index]) return index + 1;
  }
  return 0;
}

describe('openapi.json, the committed OpenAPI document', () => {
  it('is the document the service serves at GET /v3/api-docs', async () => {
    const served = await apiDocumentText(await servedApiDocument());
    const committed = await readFile(OPENAPI_FILE, 'utf8').catch(() => '');

    // A diff of the whole document would drown the message; the line tells where to look.
    const line = firstDifferentLine(served, committed);
    expect(line, `openapi.json differs from the served document at line ${line}: run \`npm run openapi\``).toBe(0);
  });
});
