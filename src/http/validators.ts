import type { Request, RequestHandler, Response } from 'express';
import { ApiError, validationError } from './api-error.js';
import { JSON_TYPE } from './media-types.js';
import { sendJson } from './respond.js';

/**
 * What a representation is made of, as versions: the resource's pKey and `ol`, then the `ol` of every row it
 * embeds (a PackagingUnit shows its Product, LoadUnit and Location). Each rises with every change of its row, so
 * the tag changes with the representation without a second query or a hash of the body (D33).
 */
export type Version = readonly (string | number | null | undefined)[];

/** A short, stable word per media type: a tag differs between a resource's representations (D33). */
function mediaWord(mediaType: string): string {
  return mediaType.replace(/^application\//, '').replace(/[^a-z0-9]+/gi, '-');
}

/**
 * The words of the media types seen so far: the routes' own types, a handful, so two regular expressions per tag
 * are run once per type instead (issue 38 item 4). Bounded all the same.
 */
const mediaWords = new Map<string, string>();
const MAX_MEDIA_WORDS = 64;

function mediaWordOf(mediaType: string): string {
  let word = mediaWords.get(mediaType);
  if (word === undefined) {
    word = mediaWord(mediaType);
    if (mediaWords.size < MAX_MEDIA_WORDS) mediaWords.set(mediaType, word);
  }
  return word;
}

/** The strong entity tag of one representation: `"<pKey>.<ol>[.<embedded ol>…].<media>"`. */
export function entityTag(version: Version, mediaType: string): string {
  let tag = '"';
  for (const part of version) tag += `${part ?? '-'}.`;
  return `${tag}${mediaWordOf(mediaType)}"`;
}

// RFC 9110 `#entity-tag`, one element at a time: an entity-tag (optional weak prefix, then any visible character but
// the double quote, quoted) or an empty element, each followed by a comma or the end. Sticky, so it scans in line.
const LIST_ELEMENT = /[ \t]*((?:W\/)?"[\x21\x23-\x7e\x80-\xff]*")?[ \t]*(?:,|$)/y;

/**
 * The tags of an If-Match or If-None-Match header: `*` only when it is the whole value (a tag list that merely
 * contains one, or a tag that does not close, is malformed); undefined when malformed.
 */
function listedTags(header: string): '*' | string[] | undefined {
  const value = header.trim();
  if (value === '*') return '*';
  const tags: string[] = [];
  LIST_ELEMENT.lastIndex = 0;
  while (LIST_ELEMENT.lastIndex < value.length) {
    const element = LIST_ELEMENT.exec(value);
    if (!element || element[0] === '') return undefined;
    if (element[1]) tags.push(element[1]);
  }
  return tags.length > 0 ? tags : undefined;
}

const CONDITIONAL_HEADER = { read: 'If-None-Match', write: 'If-Match' } as const;

/**
 * D40: the conditional header an operation declares (`validators`) is `*` or a list of entity tags, or the
 * request is a 400 naming the header before anything is read or changed.
 */
export function conditionalHeaderSyntax(validators: keyof typeof CONDITIONAL_HEADER): RequestHandler {
  const name = CONDITIONAL_HEADER[validators];
  return (req, _res, next) => {
    const header = req.headers[name.toLowerCase()];
    if (typeof header === 'string' && listedTags(header) === undefined) {
      throw validationError([{ path: name, message: 'must be * alone, or a comma-separated list of entity tags' }]);
    }
    next();
  };
}

function namesTag(header: string | undefined, tag: string): boolean {
  if (header === undefined) return false;
  const listed = listedTags(header);
  return listed === '*' || (listed ?? []).some((each) => each.replace(/^W\//, '') === tag);
}

/**
 * A single resource (200) with its ETag. A read whose If-None-Match names that tag (weak comparison, as RFC 9110
 * has it for If-None-Match) or is `*` gets 304 without a body instead.
 */
export function sendTagged(res: Response, version: Version, body: unknown, status = 200): void {
  const { req } = res;
  const tag = entityTag(version, req.mediaType ?? JSON_TYPE);
  res.setHeader('ETag', tag);
  if ((req.method === 'GET' || req.method === 'HEAD') && namesTag(req.headers['if-none-match'], tag)) {
    res.status(304).end();
    return;
  }
  sendJson(res, status, body);
}

export const PRECONDITION_FAILED = 'owms.wms.inv.preconditionFailed';

/** The response header of every answer `sendTagged` writes, for the OpenAPI document. */
export const ETAG_HEADER = {
  ETag: {
    description: 'Strong entity tag of this representation; it changes with the resource and differs per media type',
    schema: { type: 'string' },
  },
} as const;

/**
 * D33: a write with If-Match goes ahead only when the header names the resource's current tag in any of its media
 * types (strong comparison: a weak tag never matches), or is `*`. Called with the resource as locked in the
 * write's transaction, so nothing can change between the check and the write. Without the header: nothing to check.
 */
export function requireMatch(req: Request, produces: readonly string[], version: Version): void {
  const header = req.headers['if-match'];
  if (header === undefined) return;
  const listed = listedTags(header);
  if (listed === '*') return;
  const current = produces.map((mediaType) => entityTag(version, mediaType));
  if (listed?.some((tag) => current.includes(tag))) return;
  throw new ApiError(
    412,
    PRECONDITION_FAILED,
    `The resource [${String(version[0])}] has changed since the tag in If-Match was read; read it again`,
    { obj: [String(version[0])] },
  );
}
