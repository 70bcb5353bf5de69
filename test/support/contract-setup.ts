import { afterAll, afterEach, vi } from 'vitest';
import { mismatchReport, takeMismatches } from './contract.js';

// Every app a test builds with createApp (useTestApp, startInstance, or directly) checks its responses against the
// document it serves; the test that received a mismatch fails here, after its own afterEach hooks.
vi.mock(import('../../src/app.js'), async (importOriginal) => {
  const original = await importOriginal();
  const { checkResponses } = await import('./contract.js');
  return { ...original, createApp: (dependencies) => checkResponses(original.createApp(dependencies)) };
});

afterEach(async () => {
  const found = await takeMismatches();
  if (found.length > 0) throw new Error(mismatchReport(found, 'this test received'));
});

afterAll(async () => {
  const found = await takeMismatches();
  if (found.length > 0) throw new Error(mismatchReport(found, 'sent after the last test'));
});
