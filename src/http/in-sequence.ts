import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * The given middleware, one after the other, as one layer of the app (issue 38 item 4). Express dispatches every
 * layer through its router (a path match, parameter processing, a try/catch and a promise check), and every
 * request passes each cross-cutting layer; as one layer it pays for that once. A step that throws, rejects or
 * passes an error skips the rest and goes to the error handler, as it would in Express.
 */
export function inSequence(...steps: readonly RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    let index = 0;
    const advance = (error?: unknown): void => {
      if (error) return next(error);
      const step = steps[index++];
      if (!step) return next();
      try {
        const result: unknown = step(req, res, advance);
        if (result instanceof Promise) result.catch((rejection: unknown) => next(rejection ?? new Error('rejected')));
      } catch (thrown) {
        next(thrown);
      }
    };
    advance();
  };
}
