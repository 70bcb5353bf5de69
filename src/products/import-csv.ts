import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { quantityClassName, unitByCode, unitClassName } from '../units/units.js';

/** The CSV columns the import command reads, each a Product field of the same name but the base unit's two. */
export const CSV_COLUMNS = [
  'sku',
  'label',
  'accountId',
  'baseUnitMagnitude',
  'baseUnitCode',
  'description',
  'availabilityState',
  'classification',
  'group',
  'stockZone',
  'overbookingAllowed',
  'details',
] as const;

const REQUIRED_COLUMNS = ['sku', 'baseUnitMagnitude', 'baseUnitCode'] as const;

export class CsvError extends Error {
  override readonly name = 'CsvError';
}

const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * A field whose text is no JSON number, no boolean, no JSON object goes as a string: the service then names the
 * record's line and the field, as it does for an NDJSON line.
 */
function jsonOf(column: string, text: string): string {
  switch (column) {
    case 'baseUnitMagnitude':
      return JSON_NUMBER.test(text) ? text : JSON.stringify(text);
    case 'overbookingAllowed':
      return text === 'true' || text === 'false' ? text : JSON.stringify(text);
    case 'details':
      return text.trimStart().startsWith('{') ? text : JSON.stringify(text);
    default:
      return JSON.stringify(text);
  }
}

/** One record as an NDJSON line: empty fields are left out, the base unit becomes the D2 quantity. */
function productLine(header: readonly string[], record: readonly string[]): string {
  const fields: string[] = [];
  let magnitude: string | undefined;
  let code: string | undefined;
  header.forEach((column, index) => {
    const text = record[index] ?? '';
    if (text === '') return;
    if (column === 'baseUnitMagnitude') magnitude = jsonOf(column, text);
    else if (column === 'baseUnitCode') code = text;
    else fields.push(`${JSON.stringify(column)}:${jsonOf(column, text)}`);
  });
  if (magnitude !== undefined || code !== undefined) {
    const kind = unitByCode(code ?? '')?.kind ?? 'Piece';
    const unitType = JSON.stringify([unitClassName(kind), code ?? '']);
    const quantity = `{"@class":${JSON.stringify(quantityClassName(kind))},"unitType":${unitType}`;
    fields.splice(1, 0, `"baseUnit":${quantity}${magnitude === undefined ? '' : `,"magnitude":${magnitude}`}}`);
  }
  return `{${fields.join(',')}}\n`;
}

function checkHeader(header: readonly string[]): void {
  const known: readonly string[] = CSV_COLUMNS;
  const unknown = header.filter((column) => !known.includes(column));
  if (unknown.length > 0) {
    throw new CsvError(`unknown CSV column ${unknown.join(', ')}; the columns are ${CSV_COLUMNS.join(', ')}`);
  }
  const missing = REQUIRED_COLUMNS.filter((column) => !header.includes(column));
  if (missing.length > 0) throw new CsvError(`the CSV header lacks the column ${missing.join(', ')}`);
  const repeated = header.find((column, index) => header.indexOf(column) !== index);
  if (repeated !== undefined) throw new CsvError(`the CSV header names ${repeated} twice`);
}

/**
 * CSV (RFC 4180: a header row, comma-separated, fields quoted with `"` where they hold commas, quotes or line
 * breaks) in, one NDJSON Product line per record out, as the bytes arrive. A blank line is skipped. `onRecord`
 * counts the records for the progress line.
 */
export class CsvToNdjson extends Transform {
  private readonly decoder = new StringDecoder('utf8');
  private header: string[] | undefined;
  private record: string[] = [];
  private field = '';
  private quoted = false;
  /** Inside a quoted field; a quote there ends it, or escapes a second quote. */
  private inQuotes = false;
  private quoteSeen = false;

  constructor(private readonly onRecord: () => void = () => undefined) {
    super({ readableObjectMode: false });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    try {
      this.parse(this.decoder.write(chunk));
      done();
    } catch (error) {
      done(error as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      this.parse(this.decoder.end());
      if (this.inQuotes && !this.quoteSeen) throw new CsvError('the CSV ends inside a quoted field');
      this.inQuotes = false;
      if (this.field !== '' || this.record.length > 0 || this.quoted) {
        const last = this.endRecord();
        if (last !== '') this.push(last);
      }
      if (!this.header) throw new CsvError('the CSV has no header row');
      done();
    } catch (error) {
      done(error as Error);
    }
  }

  private parse(text: string): void {
    let out = '';
    for (let index = 0; index < text.length; index++) {
      const char = text[index]!;
      if (this.inQuotes) {
        if (this.quoteSeen) {
          this.quoteSeen = false;
          if (char === '"') {
            this.field += '"';
            continue;
          }
          this.inQuotes = false;
        } else if (char === '"') {
          this.quoteSeen = true;
          continue;
        } else {
          this.field += char;
          continue;
        }
      }
      if (char === '"' && this.field === '' && !this.quoted) {
        this.inQuotes = true;
        this.quoted = true;
      } else if (char === ',') {
        this.endField();
      } else if (char === '\n') {
        out += this.endRecord();
      } else if (char !== '\r') {
        this.field += char;
      }
    }
    if (out !== '') this.push(out);
  }

  private endField(): void {
    this.record.push(this.field);
    this.field = '';
    this.quoted = false;
  }

  /** The record's NDJSON line; empty for the header and for a blank line. */
  private endRecord(): string {
    this.endField();
    const record = this.record;
    this.record = [];
    if (record.length === 1 && record[0] === '') return '';
    if (!this.header) {
      this.header = record.map((column) => column.trim());
      checkHeader(this.header);
      return '';
    }
    this.onRecord();
    return productLine(this.header, record);
  }
}
