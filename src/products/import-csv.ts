import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { quantityClassName, unitByCode, unitClassName } from '../units/units.js';

/** What the records of a CSV are: its columns, those it must have, and how one record becomes an NDJSON line. */
export interface CsvLayout {
  readonly columns: readonly string[];
  readonly required: readonly string[];
  /** The record as one NDJSON line (with its line break); `field` answers a column's text, undefined when empty. */
  lineOf(field: (column: string) => string | undefined): string;
}

export class CsvError extends Error {
  override readonly name = 'CsvError';
}

const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * A field whose text is no JSON number, no boolean, no JSON object (or array) goes as a string: the service then
 * names the record's line and the field, as it does for an NDJSON line.
 */
const asNumber = (text: string): string => (JSON_NUMBER.test(text) ? text : JSON.stringify(text));
const asBoolean = (text: string): string => (text === 'true' || text === 'false' ? text : JSON.stringify(text));
const asJson = (text: string): string => (/^\s*[{[]/.test(text) ? text : JSON.stringify(text));

/** A D2 quantity of a magnitude and a unit code, either possibly missing (the service then names what is). */
function quantityJson(magnitude: string | undefined, code: string | undefined): string {
  const kind = unitByCode(code ?? '')?.kind ?? 'Piece';
  const unitType = JSON.stringify([unitClassName(kind), code ?? '']);
  const head = `{"@class":${JSON.stringify(quantityClassName(kind))},"unitType":${unitType}`;
  return `${head}${magnitude === undefined ? '' : `,"magnitude":${asNumber(magnitude)}`}}`;
}

/** The JSON members of the columns given that the record fills, each written by its function. */
function members(
  field: (column: string) => string | undefined,
  columns: Readonly<Record<string, (text: string) => string>>,
): string[] {
  return Object.entries(columns).flatMap(([column, write]) => {
    const text = field(column);
    return text === undefined ? [] : [`${JSON.stringify(column)}:${write(text)}`];
  });
}

/** Products: each column is the Product field of its name, but the base unit's two. */
export const PRODUCT_CSV: CsvLayout = {
  columns: [
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
  ],
  required: ['sku', 'baseUnitMagnitude', 'baseUnitCode'],
  lineOf(field) {
    const text = JSON.stringify;
    const fields = members(field, { sku: text });
    const [magnitude, code] = [field('baseUnitMagnitude'), field('baseUnitCode')];
    if (magnitude !== undefined || code !== undefined) fields.push(`"baseUnit":${quantityJson(magnitude, code)}`);
    fields.push(
      ...members(field, {
        label: text,
        accountId: text,
        description: text,
        availabilityState: text,
        classification: text,
        group: text,
        stockZone: text,
        overbookingAllowed: asBoolean,
        details: asJson,
      }),
    );
    return `{${fields.join(',')}}\n`;
  },
};

/**
 * PackagingUnits of a stock intake (D35): into the LoadUnit at transportUnitBK and luPos (loadUnitType where it is
 * created), or onto the Location locationId; the Product by sku, the quantity and weight each by magnitude and
 * unit code; labels a JSON array, dimension, distribution and details JSON objects; the rest as named.
 */
export const PACKAGING_UNIT_CSV: CsvLayout = {
  columns: [
    'transportUnitBK',
    'luPos',
    'loadUnitType',
    'locationId',
    'sku',
    'quantityMagnitude',
    'quantityCode',
    'serialNumber',
    'expiresAt',
    'labels',
    'weightMagnitude',
    'weightCode',
    'physicalPosition',
    'dimension',
    'distribution',
    'details',
  ],
  required: ['sku', 'quantityMagnitude', 'quantityCode'],
  lineOf(field) {
    const text = JSON.stringify;
    const fields = members(field, { transportUnitBK: text, luPos: text, loadUnitType: text });
    const locationId = field('locationId');
    if (locationId !== undefined) fields.push(`"actualLocation":{"locationId":${text(locationId)}}`);
    const sku = field('sku');
    if (sku !== undefined) fields.push(`"product":{"sku":${text(sku)}}`);
    fields.push(`"quantity":${quantityJson(field('quantityMagnitude'), field('quantityCode'))}`);
    const [weight, weightCode] = [field('weightMagnitude'), field('weightCode')];
    if (weight !== undefined || weightCode !== undefined) fields.push(`"weight":${quantityJson(weight, weightCode)}`);
    fields.push(
      ...members(field, {
        serialNumber: text,
        expiresAt: text,
        labels: asJson,
        physicalPosition: text,
        dimension: asJson,
        distribution: asJson,
        details: asJson,
      }),
    );
    return `{${fields.join(',')}}\n`;
  },
};

function checkHeader(layout: CsvLayout, header: readonly string[]): void {
  const unknown = header.filter((column) => !layout.columns.includes(column));
  if (unknown.length > 0) {
    throw new CsvError(`unknown CSV column ${unknown.join(', ')}; the columns are ${layout.columns.join(', ')}`);
  }
  const missing = layout.required.filter((column) => !header.includes(column));
  if (missing.length > 0) throw new CsvError(`the CSV header lacks the column ${missing.join(', ')}`);
  const repeated = header.find((column, index) => header.indexOf(column) !== index);
  if (repeated !== undefined) throw new CsvError(`the CSV header names ${repeated} twice`);
}

/**
 * CSV (RFC 4180: a header row, comma-separated, fields quoted with `"` where they hold commas, quotes or line
 * breaks) in, one NDJSON line per record out (as `layout` makes it), as the bytes arrive. A blank line is skipped. `onRecord`
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

  constructor(
    private readonly layout: CsvLayout,
    private readonly onRecord: () => void = () => undefined,
  ) {
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
      checkHeader(this.layout, this.header);
      return '';
    }
    this.onRecord();
    const header = this.header;
    return this.layout.lineOf((column) => {
      const text = record[header.indexOf(column)];
      return text === undefined || text === '' ? undefined : text;
    });
  }
}
