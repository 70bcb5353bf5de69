import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { WriteFence } from './wal-positions.js';

/** A primary whose answers to `pg_current_wal_lsn()` the test releases one at a time. */
function primaryAnsweredByHand(): { pool: pg.Pool; asked: number; answer(lsn: string): void; fail(): void } {
  const pending: { resolve: (value: unknown) => void; reject: (error: Error) => void }[] = [];
  const primary = {
    asked: 0,
    pool: {
      query: () =>
        new Promise((resolve, reject) => {
          primary.asked++;
          pending.push({ resolve, reject });
        }),
    } as unknown as pg.Pool,
    answer: (lsn: string) => pending.shift()!.resolve({ rows: [{ lsn }] }),
    fail: () => pending.shift()!.reject(new Error('connection terminated')),
  };
  return primary;
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('WriteFence with any-write (D41)', () => {
  it('makes a read that arrives while a question is on its way wait for the next question, shared by all such reads', async () => {
    const primary = primaryAnsweredByHand();
    const fence = new WriteFence(primary.pool, 'any-write');
    const first = fence.required();
    const second = fence.required();
    const third = fence.required();
    expect(primary.asked).toBe(1);

    primary.answer('0/10');
    expect(await first).toBe(0x10n);
    await turn();
    expect(primary.asked).toBe(2);
    primary.answer('0/20');
    expect([await second, await third]).toEqual([0x20n, 0x20n]);
  });

  it('fails the reads of a question that failed, and asks again for the next read', async () => {
    const primary = primaryAnsweredByHand();
    const fence = new WriteFence(primary.pool, 'any-write');
    const failed = fence.required();
    primary.fail();
    await expect(failed).rejects.toThrow('connection terminated');

    const next = fence.required();
    expect(primary.asked).toBe(2);
    primary.answer('0/30');
    expect(await next).toBe(0x30n);
  });
});
