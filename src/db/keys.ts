const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A pKey as PostgreSQL's uuid type takes it, or undefined for text that cannot be one: such a key is simply
 * unknown (D11), never a 400 or a cast error, and lookups keep using the uuid index.
 */
export function asUuid(pKey: string): string | undefined {
  return UUID.test(pKey) ? pKey.toLowerCase() : undefined;
}
