import { randomUUID } from 'node:crypto';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

/**
 * COPY rows kept in a temporary file until the transaction takes them: a bulk body's rows then cost disk, not
 * memory, and no connection is held while its client is still sending. The file is removed from its directory as
 * soon as it is opened, so nothing is left behind whatever ends the process; it lives until it is closed.
 */
export class RowSpool {
  private closed = false;

  private constructor(private readonly file: FileHandle) {}

  static async open(): Promise<RowSpool> {
    const path = join(tmpdir(), `inventory-rows-${randomUUID()}`);
    const file = await open(path, 'wx+', 0o600);
    await unlink(path);
    return new RowSpool(file);
  }

  async write(rows: string): Promise<void> {
    await this.file.write(rows);
  }

  /** Every row written, from the first; each call reads them anew (a retried transaction copies them again). */
  read(): Readable {
    return this.file.createReadStream({ start: 0, autoClose: false });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.file.close();
  }
}
