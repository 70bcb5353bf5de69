import pg from 'pg';
import { parseJson } from '../json.js';

/**
 * How column values arrive in JavaScript, for every pool in the process: numeric stays a string (exact decimals
 * are parsed by the units module), bigint counts become numbers, and JSON keeps every digit it was stored with.
 */
export function registerTypeParsers(): void {
  pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));
  pg.types.setTypeParser(pg.types.builtins.JSON, parseJson);
  pg.types.setTypeParser(pg.types.builtins.JSONB, parseJson);
}
