import express, { type Express } from 'express';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import type * as appModule from '../../src/app.js';
import { createApp } from '../../src/app.js';
import { checkResponses, takeMismatches } from '../support/contract.js';

/**
 * A document that declares GET /things/{id}: 200 with a Thing in JSON, 404 without a body, 409 with a Thing or
 * without a body (declared apart from `content`, as src/openapi/responses.ts declares such a status), 410 with a
 * Thing declared under `components.responses`.
 */
const DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'things', version: '1' },
  paths: {
    '/things/{id}': {
      get: {
        operationId: 'thing-get',
        responses: {
          200: {
            description: 'The thing',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
          },
          404: { description: 'No such thing' },
          409: {
            description: 'The thing in the way, or nothing',
            'x-optional-content': { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
          },
          410: { $ref: '#/components/responses/Gone' },
        },
      },
    },
    '/things/index': {
      get: { responses: { 200: { description: 'The index', content: { 'text/html': {} } } } },
    },
  },
  components: {
    responses: {
      Gone: {
        description: 'The thing that was',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
      },
    },
    schemas: {
      Thing: {
        type: 'object',
        properties: { id: { type: 'string' }, count: { type: 'integer', format: 'int32' } },
        required: ['id'],
        additionalProperties: false,
      },
    },
  },
};

/** Answers what the path names, documented or not. */
function thingsApp(): Express {
  const app = express();
  app.get('/v3/api-docs', (_req, res) => void res.json(DOCUMENT));
  app.get('/things/index', (_req, res) => void res.type('text/html').send('<p>things</p>'));
  app.get('/things/:id', (req, res) => {
    const answers: Record<string, () => void> = {
      good: () => res.json({ id: 'good', count: 1 }),
      extra: () => res.json({ id: 'extra', colour: 'red' }),
      huge: () => res.json({ id: 'huge', count: 2 ** 40 }),
      html: () => res.type('text/html').send('<p>thing</p>'),
      hal: () => res.type('application/hal+json').send('{"id":"hal"}'),
      missing: () => res.status(404).end(),
      empty: () => res.status(200).end(),
      teapot: () => res.status(418).json({ id: 'teapot' }),
      'in-the-way': () => res.status(409).json({ id: 'in-the-way' }),
      'nothing-in-the-way': () => res.status(409).end(),
      'wrong-in-the-way': () => res.status(409).json({ id: 7 }),
      'html-in-the-way': () => res.status(409).type('text/html').send('<p>thing</p>'),
      gone: () => res.status(410).json({ id: 'gone' }),
      'gone-wrong': () => res.status(410).json({ id: 'gone', count: 'many' }),
    };
    answers[req.params.id]!();
  });
  return checkResponses(app);
}

async function mismatchesOf(path: string, method: 'get' | 'head' = 'get'): Promise<string[]> {
  await request(thingsApp())[method](path);
  return (await takeMismatches()).map((mismatch) => mismatch.text);
}

describe('the response contract check (test/support/contract.ts)', () => {
  it('passes answers the document declares, with or without a body', async () => {
    expect(await mismatchesOf('/things/good')).toEqual([]);
    expect(await mismatchesOf('/things/good/?verbose=1')).toEqual([]);
    expect(await mismatchesOf('/things/missing')).toEqual([]);
    expect(await mismatchesOf('/things/index')).toEqual([]);
  });

  it('reports a body that does not match the schema, with the request, the errors and the body', async () => {
    const [mismatch, ...more] = await mismatchesOf('/things/extra');

    expect(more).toEqual([]);
    expect(mismatch).toContain('GET /things/extra → 200 application/json; charset=utf-8');
    expect(mismatch).toContain('the body does not match the schema of 200 application/json');
    expect(mismatch).toContain('must NOT have additional properties ("colour")');
    expect(mismatch).toContain('body: {"id":"extra","colour":"red"}');
    expect(await mismatchesOf('/things/huge')).toEqual([expect.stringContaining('/count must match format "int32"')]);
  });

  it('reports a status or a Content-Type the operation does not declare, and a body missing', async () => {
    expect(await mismatchesOf('/things/teapot')).toEqual([
      expect.stringContaining('GET /things/{id} (thing-get) declares no 418 (it declares 200, 404, 409, 410)'),
    ]);
    expect(await mismatchesOf('/things/html')).toEqual([
      expect.stringContaining('Content-Type text/html is not declared for 200: application/json'),
    ]);
    expect(await mismatchesOf('/things/hal')).toEqual([
      expect.stringContaining('Content-Type application/hal+json is not declared for 200: application/json'),
    ]);
    expect(await mismatchesOf('/things/empty')).toEqual([
      expect.stringContaining('no body, but GET /things/{id} (thing-get) declares 200 with a body in application/json'),
    ]);
  });

  it('passes a status declared with x-optional-content with or without a body, and checks a body that comes', async () => {
    expect(await mismatchesOf('/things/in-the-way')).toEqual([]);
    expect(await mismatchesOf('/things/nothing-in-the-way')).toEqual([]);
    expect(await mismatchesOf('/things/wrong-in-the-way')).toEqual([
      expect.stringContaining('the body does not match the schema of 409 application/json'),
    ]);
    expect(await mismatchesOf('/things/html-in-the-way')).toEqual([
      expect.stringContaining('Content-Type text/html is not declared for 409: application/json'),
    ]);
  });

  it('follows a status declared under components.responses and checks the body against its schema', async () => {
    expect(await mismatchesOf('/things/gone')).toEqual([]);
    expect(await mismatchesOf('/things/gone-wrong')).toEqual([expect.stringContaining('/count must be integer')]);
  });

  it('holds HEAD to the statuses only, and leaves paths and methods without an operation alone', async () => {
    expect(await mismatchesOf('/things/html', 'head')).toEqual([]);
    expect(await mismatchesOf('/things/teapot', 'head')).toEqual([expect.stringContaining('declares no 418')]);
    expect(await mismatchesOf('/elsewhere')).toEqual([]);
    await request(thingsApp()).post('/things/good');
    expect(await takeMismatches()).toEqual([]);
  });

  it('is installed on every app createApp builds (test/support/contract-setup.ts)', async () => {
    const original = await vi.importActual<typeof appModule>('../../src/app.js');

    expect(createApp).not.toBe(original.createApp);
  });
});
