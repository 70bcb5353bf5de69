import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { parseOptions, refuseCommandLine } from '../command-line.js';
import { CsvToNdjson, PACKAGING_UNIT_CSV, PRODUCT_CSV } from './import-csv.js';
import { ImportProgress } from './import-progress.js';
import { confirmCancelled } from './import-cancel.js';

const USAGE = `Usage: node dist/products/import-cli.js [--url URL] [--token TOKEN] [--format ndjson|csv]
                                         [--on-conflict fail|skip|update | --packaging-units]
                                         [--no-idempotency-key] FILE
       npm run --silent import -- [options] FILE

Streams FILE to POST /v1/products of a running service as one all-or-nothing import (application/x-ndjson),
with a progress line on stderr. Exits 0 once the service has stored the import, saying on stdout how many
Products it created, skipped and updated; 1 with the service's error when it refused the import (then nothing is
stored) or could not be reached; 2 when called the wrong way; 130 after Ctrl-C.

The import is sent with an Idempotency-Key made of the file's SHA-256 and the target URL (printed on stderr):
running the same command again after an interruption stores the file once, answering the first answer. Ctrl-C
ends the upload; the service then rolls the import back, and the command waits up to 5 s for it to confirm,
printing "cancelled, nothing stored", or else "the service may have stored it; run the same command again, it
is idempotent".

  FILE             NDJSON (one Product per line, as POST /v1/products takes them), or CSV with a header row
  --packaging-units
                   FILE is a stock intake instead: PackagingUnits, streamed to POST /v1/packaging-units (D35),
                   one unit a line as that operation takes them
  --url URL        the service's base URL (default: $INVENTORY_URL, else http://127.0.0.1:8080)
  --token TOKEN    a bearer token that may write (default: $TOKEN; npm run -s token prints one)
  --format FORMAT  ndjson or csv (default: csv for a name ending in .csv, else ndjson)
  --no-idempotency-key
                   send no Idempotency-Key (a second run then imports the file again)
  --on-conflict MODE
                   what to do with a SKU the service stores already: fail (the default: refuse the import),
                   skip (leave it as it is) or update (replace it by its line, as PUT does, where it differs);
                   so an import can be run again

CSV columns, by header name in any order (an empty field is an absent one): sku, baseUnitMagnitude and
baseUnitCode (required), label, accountId, description, availabilityState, classification, group, stockZone,
overbookingAllowed (true or false), details (a JSON object). Units, dimension and stacking rules need NDJSON.

CSV columns of --packaging-units: sku, quantityMagnitude and quantityCode (required); transportUnitBK, luPos
and loadUnitType (into a LoadUnit), or locationId (onto a Location); serialNumber, expiresAt, labels (a JSON
array), weightMagnitude and weightCode, physicalPosition, dimension, distribution and details (JSON objects).
The service numbers a CSV's records after the header as lines 1, 2, ...
`;

const PROGRESS_EVERY_MS = 1000;
/** Without a terminal (a log file) a line every so often, not one rewritten every second. */
const LOG_PROGRESS_EVERY_MS = 10_000;

interface Options {
  readonly file: string;
  readonly url: URL;
  readonly token: string;
  readonly format: 'ndjson' | 'csv';
  /** A stock intake of PackagingUnits rather than a product import. */
  readonly packagingUnits: boolean;
  readonly idempotencyKey: boolean;
}

const ON_CONFLICT = ['fail', 'skip', 'update'];

function optionsOf(args: readonly string[]): Options {
  const parsed = parseOptions(
    () =>
      parseArgs({
        args: [...args],
        allowPositionals: true,
        options: {
          url: { type: 'string' },
          token: { type: 'string' },
          format: { type: 'string' },
          'on-conflict': { type: 'string' },
          'packaging-units': { type: 'boolean' },
          'no-idempotency-key': { type: 'boolean' },
          help: { type: 'boolean', short: 'h' },
        },
      }),
    USAGE,
  );
  const [file, extra] = parsed.positionals;
  if (file === undefined) refuseCommandLine('Which file? FILE is missing.', USAGE);
  if (extra !== undefined) refuseCommandLine(`Unexpected argument '${extra}'.`, USAGE);
  const format = parsed.values.format ?? (file.toLowerCase().endsWith('.csv') ? 'csv' : 'ndjson');
  if (format !== 'ndjson' && format !== 'csv') refuseCommandLine(`Unknown format '${format}'.`, USAGE);
  const packagingUnits = parsed.values['packaging-units'] ?? false;
  if (packagingUnits && parsed.values['on-conflict'] !== undefined) {
    refuseCommandLine('--on-conflict applies to Products, not to --packaging-units.', USAGE);
  }
  const onConflict = parsed.values['on-conflict'] ?? 'fail';
  if (!ON_CONFLICT.includes(onConflict)) refuseCommandLine(`Unknown --on-conflict '${onConflict}'.`, USAGE);
  const base = parsed.values.url ?? process.env.INVENTORY_URL ?? 'http://127.0.0.1:8080';
  let url: URL;
  try {
    const target = packagingUnits ? 'v1/packaging-units' : `v1/products?onConflict=${onConflict}`;
    url = new URL(target, base.endsWith('/') ? base : `${base}/`);
  } catch {
    refuseCommandLine(`'${base}' is no URL.`, USAGE);
  }
  const token = parsed.values.token ?? process.env.TOKEN;
  if (!token) refuseCommandLine('No token: pass --token or set TOKEN.', USAGE);
  const idempotencyKey = !(parsed.values['no-idempotency-key'] ?? false);
  return { file, url, token, format, packagingUnits, idempotencyKey };
}

const count = (value: number): string => Math.round(value).toLocaleString('en-US');

/** Prints the progress line every so often: rewritten in place on a terminal, a line at a time in a log. */
function printEverySoOften(progress: ImportProgress): () => void {
  const tty = process.stderr.isTTY;
  const print = (start: string, end: string): void => {
    process.stderr.write(`${start}${progress.line()}${end}`);
  };
  const timer = setInterval(
    () => print(tty ? '\r' : '', tty ? '\x1b[K' : '\n'),
    tty ? PROGRESS_EVERY_MS : LOG_PROGRESS_EVERY_MS,
  );
  timer.unref();
  return () => {
    clearInterval(timer);
    if (tty) print('\r', '\x1b[K\n');
  };
}

/** Counts the file's bytes (and, for NDJSON, its lines) as they pass. */
function counter(progress: ImportProgress, countLines: boolean): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      progress.bytes += chunk.length;
      if (countLines) {
        for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) progress.rows++;
      }
      done(null, chunk);
    },
  });
}

interface Answer {
  readonly status: number;
  readonly body: string;
  /** The service answered with the stored answer of an earlier request under the same Idempotency-Key. */
  readonly replayed: boolean;
}

/** The service's error text: the `message` of its JSON error body, else the body itself. */
function errorText(answer: Answer): string {
  try {
    const { message } = JSON.parse(answer.body) as { message?: unknown };
    if (typeof message === 'string') return message;
  } catch {
    // Not JSON: a proxy's page, say.
  }
  return answer.body.trim().slice(0, 2000) || '(no body)';
}

/** D38: the same file to the same target is the same request, whenever it is sent again. */
async function idempotencyKeyOf(file: string, url: URL): Promise<string> {
  const fileHash = createHash('sha256');
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) fileHash.update(chunk);
  return createHash('sha256')
    .update(`${fileHash.digest('hex')}\n${url.href}`)
    .digest('hex');
}

async function importFile({ file, url, token, format, packagingUnits, idempotencyKey }: Options): Promise<number> {
  let size: number;
  try {
    const stat = statSync(file);
    // A pipe (/dev/stdin) has no size: then no share and no ETA.
    size = stat.isFile() ? stat.size : 0;
  } catch (error) {
    process.stderr.write(`Cannot read ${file}: ${(error as Error).message}\n`);
    return 1;
  }
  const key = idempotencyKey ? await idempotencyKeyOf(file, url) : undefined;
  if (key) process.stderr.write(`Idempotency-Key: ${key}\n`);
  const progress = new ImportProgress(size);
  const stopPrinting = printEverySoOften(progress);
  const request = (url.protocol === 'https:' ? https : http).request(url, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/x-ndjson',
      Accept: 'application/json',
      ...(key && { 'Idempotency-Key': key }),
      // NDJSON goes as it is, so the service can refuse a file over its limit before anything is sent.
      ...(format === 'ndjson' && size > 0 && { 'Content-Length': String(size) }),
    },
  });
  const answered = new Promise<Answer>((resolve, reject) => {
    request.on('error', reject);
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (piece: string) => (body += piece));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body,
          replayed: response.headers['idempotent-replayed'] === 'true',
        }),
      );
      response.on('error', reject);
    });
  });
  const source = createReadStream(file);
  const counted = counter(progress, format === 'ndjson');
  // The service may answer before the upload ends (the first invalid line); its answer is what counts.
  const uploading =
    format === 'csv'
      ? pipeline(
          source,
          counted,
          new CsvToNdjson(packagingUnits ? PACKAGING_UNIT_CSV : PRODUCT_CSV, () => progress.rows++),
          request,
        )
      : pipeline(source, counted, request);
  const uploaded = uploading.then(
    () => progress.sent(),
    (error: Error) => error,
  );
  let interrupted = false;
  const interruption = new Promise<void>((resolve) =>
    process.once('SIGINT', () => {
      interrupted = true;
      request.destroy();
      resolve();
    }),
  );
  let answer: Answer;
  try {
    answer = await Promise.race([answered, interruption.then(() => Promise.reject(new Error('interrupted')))]);
  } catch (error) {
    stopPrinting();
    if (interrupted) {
      const cancelled = key !== undefined && (await confirmCancelled(url, token, key));
      process.stderr.write(
        cancelled
          ? 'Interrupted: cancelled, nothing stored\n'
          : key
            ? 'Interrupted: the service may have stored it; run the same command again, it is idempotent\n'
            : 'Interrupted: the service may have stored it (sent without an Idempotency-Key)\n',
      );
      return 130;
    }
    const cause = (await uploaded) ?? (error as Error);
    process.stderr.write(`Import failed after ${count(progress.rows)} rows: ${cause.message}\n`);
    return 1;
  }
  stopPrinting();
  if (answer.status === 200 || answer.status === 201) {
    if (answer.replayed) {
      process.stdout.write('An earlier run with this Idempotency-Key stored the file; nothing was stored again:\n');
    }
    const seconds = progress.seconds;
    const { created, skipped, updated } = JSON.parse(answer.body) as Record<string, number>;
    if (packagingUnits) {
      process.stdout.write(
        `Took in ${count(created ?? 0)} ${created === 1 ? 'PackagingUnit' : 'PackagingUnits'} in ` +
          `${seconds.toFixed(1)} s (${count((created ?? 0) / seconds)}/s)\n`,
      );
      return 0;
    }
    process.stdout.write(
      `Imported ${count(progress.rows)} ${progress.rows === 1 ? 'Product' : 'Products'} in ${seconds.toFixed(1)} s ` +
        `(${count(progress.rows / seconds)}/s): ${created} created, ${skipped} skipped, ${updated} updated\n`,
    );
    return 0;
  }
  process.stderr.write(
    `Import refused, nothing stored: HTTP ${answer.status} ${http.STATUS_CODES[answer.status] ?? ''}: ` +
      `${errorText(answer)}\n`,
  );
  return 1;
}

/** `npm run import -- FILE`: exits with importFile's code once the service has answered. */
process.exit(await importFile(optionsOf(process.argv.slice(2))));
