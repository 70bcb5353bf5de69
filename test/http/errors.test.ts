import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectNoInternals, expectServerDeclined, HAL_JSON_UTF8, UUID } from '../support/http.js';
import { bearer } from '../support/tokens.js';

const ctx = useTestApp();

describe('server-declined errors (D6)', () => {
  it('answers an unknown route with 404 NoHandlerFoundException whose path has no query string', async () => {
    const response = await request(ctx.app).get('/v1/nothing-here?sku=secret-ish').set('Authorization', bearer());
    expectServerDeclined(response, {
      status: 404,
      error: 'Not Found',
      exception: 'NoHandlerFoundException',
      message: 'No endpoint GET /v1/nothing-here',
      path: '/v1/nothing-here',
    });
    expectNoInternals(response);
  });

  it('answers a wrong method with 405 and an Allow header listing the methods of that path', async () => {
    const response = await request(ctx.app).put('/index').set('Authorization', bearer());
    expectServerDeclined(response, {
      status: 405,
      error: 'Method Not Allowed',
      exception: 'HttpRequestMethodNotSupportedException',
      message: "Request method 'PUT' is not supported",
      path: '/index',
    });
    expect(response.headers.allow).toBe('GET, HEAD');
  });

  it('lists every method the products collection supports in the Allow header of a 405', async () => {
    const response = await request(ctx.app).patch('/v1/products').set('Authorization', bearer());
    expect(response.status).toBe(405);
    const allowed = String(response.headers.allow).split(', ').sort();
    expect(allowed).toEqual(['GET', 'HEAD', 'POST', 'PUT']);
  });

  it('answers 406 in JSON when Accept cannot be satisfied', async () => {
    const response = await request(ctx.app)
      .get('/v1/products/index')
      .set('Authorization', bearer())
      .set('Accept', 'image/png');
    expectServerDeclined(response, {
      status: 406,
      error: 'Not Acceptable',
      exception: 'HttpMediaTypeNotAcceptableException',
      message: /application\/hal\+json/,
      path: '/v1/products/index',
    });
  });
});

describe('request bodies on POST /v1/products', () => {
  it('answers malformed JSON with 400 HttpMessageNotReadableException', async () => {
    const response = await request(ctx.app)
      .post('/v1/products?dryRun=1')
      .set('Authorization', bearer())
      .set('Content-Type', 'application/json')
      .send('[{"sku": "A-1", ');
    expectServerDeclined(response, {
      status: 400,
      error: 'Bad Request',
      exception: 'HttpMessageNotReadableException',
      message: /not readable/i,
      path: '/v1/products',
    });
    expectNoInternals(response);
  });

  it('checks the token before reading the body: malformed JSON without a token is 401', async () => {
    const response = await request(ctx.app)
      .post('/v1/products')
      .set('Content-Type', 'application/json')
      .send('[{"sku": ');
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ exception: 'AuthenticationCredentialsNotFoundException' });
  });

  it('answers Content-Type text/plain with 415 HttpMediaTypeNotSupportedException', async () => {
    const response = await request(ctx.app)
      .post('/v1/products')
      .set('Authorization', bearer())
      .set('Content-Type', 'text/plain')
      .send('[{"sku": "A-1"}]');
    expectServerDeclined(response, {
      status: 415,
      error: 'Unsupported Media Type',
      exception: 'HttpMediaTypeNotSupportedException',
      message: /text\/plain.*application\/json/,
      path: '/v1/products',
    });
  });

  it('checks the content type before parsing: malformed text/plain is 415, not 400', async () => {
    const response = await request(ctx.app)
      .post('/v1/products')
      .set('Authorization', bearer())
      .set('Content-Type', 'text/plain')
      .send('[{"sku": ');
    expect(response.status).toBe(415);
  });

  it('reads a well-formed JSON body and answers an invalid product with an API-declined 400', async () => {
    const response = await request(ctx.app).post('/v1/products').set('Authorization', bearer()).send([{}]);
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error', httpStatus: '400' });
    expectNoInternals(response);
  });
});

describe('with BODY_LIMIT=1kb', () => {
  const small = useTestApp({ BODY_LIMIT: '1kb' });

  it('answers a body over the limit with 413 PayloadTooLargeException', async () => {
    const body = JSON.stringify([{ sku: 'A-1', description: 'x'.repeat(2048) }]);
    const response = await request(small.app)
      .post('/v1/products')
      .set('Authorization', bearer())
      .set('Content-Type', 'application/json')
      .send(body);
    expectServerDeclined(response, {
      status: 413,
      error: 'Payload Too Large',
      exception: 'PayloadTooLargeException',
      message: /1kb/,
      path: '/v1/products',
    });
  });

  it('reads a body under the limit', async () => {
    const response = await request(small.app)
      .post('/v1/products')
      .set('Authorization', bearer())
      .set('Content-Type', 'application/json')
      .send(JSON.stringify([{ description: 'x'.repeat(512) }]));
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error' });
  });
});

describe('X-Request-Id', () => {
  it('echoes a sane id sent by the client', async () => {
    const response = await request(ctx.app).get('/index').set('X-Request-Id', 'order-42.retry:1');
    expect(response.status).toBe(200);
    expect(response.headers['x-request-id']).toBe('order-42.retry:1');
  });

  it('generates a fresh UUID per request when the client sends none', async () => {
    const first = await request(ctx.app).get('/index');
    const second = await request(ctx.app).get('/index');
    expect(first.headers['x-request-id']).toMatch(UUID);
    expect(second.headers['x-request-id']).toMatch(UUID);
    expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
  });

  it.each([
    ['300 characters long', 'a'.repeat(300)],
    ['containing spaces', 'two words'],
    ['containing markup', '<script>alert(1)</script>'],
  ])('replaces a client id %s with a UUID', async (_what, offered) => {
    const response = await request(ctx.app).get('/index').set('X-Request-Id', offered);
    expect(response.headers['x-request-id']).toMatch(UUID);
  });

  it.each([
    ['401', (): request.Test => request(ctx.app).get('/v1/products/index')],
    ['404', (): request.Test => request(ctx.app).get('/v1/nothing').set('Authorization', bearer())],
    ['405', (): request.Test => request(ctx.app).delete('/index').set('Authorization', bearer())],
    [
      '406',
      (): request.Test =>
        request(ctx.app).get('/v1/products/index').set('Authorization', bearer()).set('Accept', 'image/png'),
    ],
  ])('is carried by a %s error response too', async (status, send) => {
    const echoed = await send().set('X-Request-Id', `probe-${status}`);
    expect(echoed.status).toBe(Number(status));
    expect(echoed.headers['x-request-id']).toBe(`probe-${status}`);
    const generated = await send();
    expect(generated.headers['x-request-id']).toMatch(UUID);
    expectNoInternals(generated);
  });
});
