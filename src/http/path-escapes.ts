import type { RequestHandler } from 'express';

function decodes(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

/**
 * A path segment with a broken percent escape (`%zz`, a cut-off UTF-8 sequence) is taken literally, its `%`
 * re-escaped, so it reaches the route as an unknown key (a 404, D11) instead of failing inside the router.
 */
export const literalBrokenEscapes: RequestHandler = (req, _res, next) => {
  const queryStart = req.url.indexOf('?');
  const path = queryStart === -1 ? req.url : req.url.slice(0, queryStart);
  if (path.includes('%')) {
    const repaired = path
      .split('/')
      .map((segment) => (decodes(segment) ? segment : segment.replaceAll('%', '%25')))
      .join('/');
    if (repaired !== path) req.url = repaired + (queryStart === -1 ? '' : req.url.slice(queryStart));
  }
  next();
};
