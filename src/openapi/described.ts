/** An OpenAPI response description that names the message keys a client can meet. */
export function described(description: string, keys: readonly string[] = []): { description: string } {
  return { description: keys.length > 0 ? `${description}: ${keys.join(', ')}` : description };
}
