import express from 'express';
import client from 'prom-client';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { JsonArrayStreams, STREAM_PAGE_SIZE } from '../../src/http/stream.js';
import { OutgoingStreams } from '../../src/http/stream-writer.js';

interface Row {
  id: number;
}

describe('JsonArrayStreams (issue 15)', () => {
  it('reads the pages of concurrent streams one at a time, and each stream gets all its rows in order', async () => {
    const settings = {
      maxConcurrent: 4,
      stallTimeoutMs: 5000,
      bufferBytes: 1024 * 1024,
      totalBufferBytes: 16 * 1024 * 1024,
    };
    const registry = new client.Registry();
    const streams = new JsonArrayStreams(settings, registry, new OutgoingStreams(settings, registry));
    const rows: Row[] = Array.from({ length: 3 * STREAM_PAGE_SIZE + 7 }, (_, index) => ({ id: index + 1 }));
    let reading = 0;
    let mostReading = 0;
    let pagesRead = 0;
    const readPage = async (after: Row | undefined, limit: number): Promise<Row[]> => {
      reading++;
      mostReading = Math.max(mostReading, reading);
      await new Promise((resolve) => setTimeout(resolve, 5));
      reading--;
      pagesRead++;
      const from = after?.id ?? 0;
      return rows.slice(from, from + limit);
    };
    const app = express();
    app.get('/list', (req, res, next) => {
      streams.send(req, res, readPage, (row) => row).catch(next);
    });

    const answers = await Promise.all(Array.from({ length: 4 }, () => request(app).get('/list')));

    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    for (const answer of answers) expect(answer.body).toEqual(rows);
    expect(pagesRead).toBe(4 * 4);
    expect(mostReading).toBe(1);
  });
});
