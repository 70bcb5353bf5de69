import { afterEach, describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import { isoTime } from './logger.js';

describe('the log lines’ time', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is the text pino’s isoTime writes, at every millisecond of a second and across seconds', () => {
    vi.useFakeTimers();
    const times = [
      Date.UTC(2026, 10, 29, 16, 30, 5, 0),
      Date.UTC(2026, 10, 29, 16, 30, 5, 7),
      Date.UTC(2026, 10, 29, 16, 30, 5, 42),
      Date.UTC(2026, 10, 29, 16, 30, 5, 999),
      Date.UTC(2026, 10, 29, 16, 30, 6, 1),
      Date.UTC(2026, 10, 29, 16, 30, 4, 500),
      Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      Date.UTC(2027, 0, 1, 0, 0, 0, 0),
      0,
      Date.UTC(1969, 11, 31, 23, 59, 59, 250),
    ];
    for (const time of times) {
      vi.setSystemTime(time);
      expect(isoTime()).toBe(pino.stdTimeFunctions.isoTime());
    }
  });
});
