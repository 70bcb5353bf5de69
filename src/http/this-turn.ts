import { setImmediate } from 'node:timers';

/**
 * Values made at most once per turn of the event loop, then forgotten: the streams that write on the same pulse ask
 * for the same batch and the same compressed segment, and the first of them makes it for all (D39).
 */
export class ThisTurn<V> {
  private readonly values = new Map<string, V>();
  private clearing = false;

  get(key: string, make: () => V): V {
    const kept = this.values.get(key);
    if (kept !== undefined) return kept;
    const value = make();
    this.values.set(key, value);
    if (!this.clearing) {
      this.clearing = true;
      setImmediate(() => {
        this.values.clear();
        this.clearing = false;
      });
    }
    return value;
  }
}
