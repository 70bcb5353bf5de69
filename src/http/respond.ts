import type { Response } from 'express';
import { stringifyJson } from '../json.js';

/** Writes a JSON body in the media type negotiation chose (HAL, plain or vendor JSON: all JSON text). */
export function sendJson(res: Response, status: number, body: unknown): void {
  res
    .status(status)
    .type(res.req.mediaType ?? 'application/json')
    .send(stringifyJson(body));
}

export function sendNoContent(res: Response, status = 204): void {
  res.status(status).end();
}
