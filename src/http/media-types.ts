export const HAL_JSON = 'application/hal+json';
export const JSON_TYPE = 'application/json';
/** Newline-delimited JSON: one value per line, a streamed body (issue 14). */
export const NDJSON = 'application/x-ndjson';
/** D1: the vendor type for PackagingUnit lists, in both spellings the real system's clients use. */
export const PACKAGING_UNIT_VENDOR_TYPES = [
  'application/vnd.openwms.packaging-unit-v1+json',
  'application/vnd.owms.packaging-unit-v1+json',
] as const;
export const XML_TYPES = ['application/xml', 'application/hal+xml', 'text/xml'] as const;
/** Server-Sent Events (D33): an answer that never ends, so only for a client that names it. */
export const EVENT_STREAM = 'text/event-stream';

/** What a route can answer with, in the server's order of preference (the first is the default). */
export const SINGLE_RESOURCE = [HAL_JSON, JSON_TYPE] as const;
export const PLAIN_LIST = [JSON_TYPE] as const;
export const PACKAGING_UNIT_LIST = [JSON_TYPE, ...PACKAGING_UNIT_VENDOR_TYPES] as const;
export const INDEX_RESOURCE = [HAL_JSON, JSON_TYPE, ...XML_TYPES] as const;

export function isVendorType(mediaType: string | undefined): boolean {
  return (PACKAGING_UNIT_VENDOR_TYPES as readonly string[]).includes(mediaType ?? '');
}

export function isXmlType(mediaType: string | undefined): boolean {
  return (XML_TYPES as readonly string[]).includes(mediaType ?? '');
}

/** Media types served only when Accept names them: XML (D7) and event streams (D33), never for a wildcard. */
export function isNamedOnly(mediaType: string): boolean {
  return isXmlType(mediaType) || mediaType === EVENT_STREAM;
}
