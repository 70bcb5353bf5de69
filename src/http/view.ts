/** A JSON object being built for a response. */
export type Json = Record<string, unknown>;

/** Sets `key` only when there is a value: responses leave out absent optional fields (README, API notes). */
export function put(target: Json, key: string, value: unknown): void {
  if (value !== null && value !== undefined) target[key] = value;
}
