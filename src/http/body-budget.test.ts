import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { describe, expect, it } from 'vitest';
import { BodyBudget } from './body-budget.js';

/** What the budget sees of a response: its `close`. */
const aResponse = (): Response & EventEmitter => new EventEmitter() as Response & EventEmitter;
const settled = async (promise: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe('BodyBudget (issue 39)', () => {
  it('lets the first body grow beyond the budget and the next wait until it is answered', async () => {
    const budget = new BodyBudget(100, 10_000);
    const [first, second] = [aResponse(), aResponse()];
    const firstShare = await budget.take(10, first);
    await firstShare.grow(200);
    const secondTurn = budget.take(10, second);
    expect(await settled(secondTurn)).toBe(false);

    first.emit('close');
    expect(await settled(secondTurn)).toBe(true);
    second.emit('close');
  });

  it('makes a growing body wait for the one before it, and counts its growth until its answer', async () => {
    const budget = new BodyBudget(100, 10_000);
    const [first, second, third] = [aResponse(), aResponse(), aResponse()];
    await budget.take(10, first);
    const secondShare = await budget.take(10, second);
    const growth = secondShare.grow(90);
    expect(await settled(growth)).toBe(false);

    first.emit('close');
    expect(await settled(growth)).toBe(true);
    // 100 held by the second: a third waits until it is answered, then all of it is given back.
    const thirdTurn = budget.take(100, third);
    expect(await settled(thirdTurn)).toBe(false);
    second.emit('close');
    expect(await settled(thirdTurn)).toBe(true);
    third.emit('close');
  });

  it('answers 503 to a growth that waits longer than the longest wait', async () => {
    const budget = new BodyBudget(100, 50);
    const [first, second] = [aResponse(), aResponse()];
    await budget.take(90, first);
    const secondShare = await budget.take(10, second);

    await expect(secondShare.grow(50)).rejects.toMatchObject({ status: 503 });
    first.emit('close');
    second.emit('close');
  });
});
