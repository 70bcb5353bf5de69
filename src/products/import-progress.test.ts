import { describe, expect, it } from 'vitest';
import { ImportProgress } from './import-progress.js';

/** A clock the test moves. */
function clock(): { now: () => number; advance: (ms: number) => void } {
  let time = 1_000_000;
  return { now: () => time, advance: (ms) => (time += ms) };
}

describe('the import command progress line (issue 26, item 5)', () => {
  it('says rows, rate, share and time left while the file is being sent', () => {
    const { now, advance } = clock();
    const progress = new ImportProgress(10_000_000, now);
    advance(10_000);
    progress.rows = 50_000;
    progress.bytes = 2_500_000;

    expect(progress.line()).toBe('50,000 rows  5,000 rows/s  25% of 10.0 MB  ETA 0:00:30');
  });

  it('keeps the figures of the upload once it is sent and says how long the service has been storing, without an ETA', () => {
    const { now, advance } = clock();
    const progress = new ImportProgress(10_000_000, now);
    advance(40_000);
    progress.rows = 200_000;
    progress.bytes = 10_000_000;
    progress.sent();

    const lines = [0, 65_000, 3_600_000].map((ms) => {
      advance(ms);
      return progress.line();
    });

    expect(lines).toEqual([
      '200,000 rows sent in 0:00:40 (5,000 rows/s); the service has been storing them for 0:00:00',
      '200,000 rows sent in 0:00:40 (5,000 rows/s); the service has been storing them for 0:01:05',
      '200,000 rows sent in 0:00:40 (5,000 rows/s); the service has been storing them for 1:01:05',
    ]);
  });

  it('shows the megabytes read of a pipe, which has no size and so no share', () => {
    const { now, advance } = clock();
    const progress = new ImportProgress(0, now);
    advance(2_000);
    progress.rows = 10;
    progress.bytes = 1_500_000;

    expect(progress.line()).toBe('10 rows  5 rows/s  1.5 MB');
  });
});
