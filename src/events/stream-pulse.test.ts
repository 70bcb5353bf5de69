import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { StreamPulse } from './stream-pulse.js';

type Advanced = (through: number, full: boolean) => void;

/** A pulse of 10 s over a reader the test advances itself, and a stream that has just been woken by a beat. */
async function pulseAfterABeat(): Promise<{ advance: Advanced; next: () => Promise<void> }> {
  let advance: Advanced = () => undefined;
  const pulse = new StreamPulse(10_000, { onAdvanced: (listener: Advanced) => (advance = listener) });
  const next = pulse.follower(new AbortController().signal);
  const first = next();
  advance(1, true);
  await first;
  return { advance: (through, full) => advance(through, full), next };
}

async function wokenWithin(wait: Promise<void>, ms: number): Promise<boolean> {
  return Promise.race([wait.then(() => true), delay(ms).then(() => false)]);
}

describe('the streams’ pulse (D39)', () => {
  it('wakes the streams at once when the reader read a full page: a bulk load is coming', async () => {
    const { advance, next } = await pulseAfterABeat();
    const waiting = next();

    advance(2_000, true);

    expect(await wokenWithin(waiting, 1_000)).toBe(true);
  });

  it('lets events that come one by one wait for the next pulse after a beat', async () => {
    const { advance, next } = await pulseAfterABeat();
    const waiting = next();

    advance(2, false);

    expect(await wokenWithin(waiting, 200)).toBe(false);
  });
});
