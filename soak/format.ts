import { formatNumber } from '../bench/results.js';
import type { Exit } from '../test/support/service-process.js';

/** Seconds into the run as m:ss. */
export function clock(seconds: number): string {
  const whole = Math.floor(seconds);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

/** A count with thousands separators. */
export const count = (value: number): string => formatNumber(value);

/** Error counts that are not zero, e.g. `503 ×812, proxy 502 ×40`, or `none`. */
export function nonZero(counts: Readonly<Record<string, number>>): string {
  const parts = Object.entries(counts)
    .filter(([, value]) => value > 0)
    .map(([name, value]) => `${name} ×${count(value)}`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

export function describeExit(exit: Exit): string {
  return exit.signal ? `ended by ${exit.signal}` : `exited with code ${exit.code}`;
}
