import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectServerDeclined } from '../support/http.js';
import { bearer } from '../support/tokens.js';

const PAGE = 'http://127.0.0.1:5173';
const OTHER_PAGE = 'http://127.0.0.1:5174';
// WWW-Authenticate: a page reads why its token was refused (RFC 6750, D37).
const EXPOSED = 'Location, ETag, Link, Retry-After, X-Request-Id, Idempotent-Replayed, WWW-Authenticate';

describe('CORS with CORS_ALLOWED_ORIGINS (D33)', () => {
  const ctx = useTestApp({ CORS_ALLOWED_ORIGINS: `${PAGE}, https://ui.example` });

  it('answers a preflight from a listed origin 204 without a token, naming what the page may send', async () => {
    const response = await request(ctx.app)
      .options('/v1/products')
      .set('Origin', PAGE)
      .set('Access-Control-Request-Method', 'PUT')
      .set('Access-Control-Request-Headers', 'authorization, if-match');

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(response.headers['access-control-allow-origin']).toBe(PAGE);
    expect(response.headers.vary).toBe('Origin');
    expect(response.headers['access-control-allow-methods']).toBe('POST, GET, PUT, HEAD');
    expect(response.headers['access-control-allow-headers']).toBe(
      'Authorization, Content-Type, Accept, Idempotency-Key, If-Match, If-None-Match, Last-Event-ID, X-Request-Id, ' +
        'traceparent, tracestate',
    );
    expect(response.headers['access-control-max-age']).toBe('600');
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('lets the page read an answer and the headers D33 exposes', async () => {
    const response = await request(ctx.app).get('/index').set('Origin', PAGE);

    expect(response.status).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBe(PAGE);
    expect(response.headers['access-control-expose-headers']).toBe(EXPOSED);
    expect(response.headers.vary).toContain('Origin');
  });

  it('puts the headers on errors too: a 401 without a token and a 404 of an unknown route', async () => {
    const unauthorized = await request(ctx.app).get('/v1/products').set('Origin', PAGE);
    expectServerDeclined(unauthorized, {
      status: 401,
      error: 'Unauthorized',
      exception: 'AuthenticationCredentialsNotFoundException',
      message: /token/i,
      path: '/v1/products',
    });
    expect(unauthorized.headers['access-control-allow-origin']).toBe(PAGE);
    expect(unauthorized.headers['access-control-expose-headers']).toBe(EXPOSED);

    const unknown = await request(ctx.app).get('/v1/nothing-here').set('Origin', PAGE).set('Authorization', bearer());
    expect(unknown.status).toBe(404);
    expect(unknown.headers['access-control-allow-origin']).toBe(PAGE);
  });

  it('gives an origin that is not listed no CORS header, and its preflight the usual 401', async () => {
    const response = await request(ctx.app)
      .options('/v1/products')
      .set('Origin', OTHER_PAGE)
      .set('Access-Control-Request-Method', 'GET');

    expect(response.status).toBe(401);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    expect(response.headers['access-control-allow-methods']).toBeUndefined();
    expect(response.headers.vary).toContain('Origin');
  });

  it('answers an OPTIONS that is no preflight, with a token, with the methods of the path, as the document says', async () => {
    const response = await request(ctx.app).options('/v1/products').set('Origin', PAGE).set('Authorization', bearer());

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain');
    expect(response.headers.allow).toBe('GET, HEAD, POST, PUT');
    expect(response.text).toBe('GET, HEAD, POST, PUT');
    expect(response.headers['access-control-allow-origin']).toBe(PAGE);
  });

  it('compares origins without regard to case, and answers with the origin as the browser sent it', async () => {
    const response = await request(ctx.app).get('/index').set('Origin', 'HTTPS://UI.example');

    expect(response.headers['access-control-allow-origin']).toBe('HTTPS://UI.example');
  });
});

describe('without CORS_ALLOWED_ORIGINS', () => {
  const ctx = useTestApp();

  it('sends no CORS header and no Vary: Origin', async () => {
    const response = await request(ctx.app).get('/index').set('Origin', PAGE);

    expect(response.status).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    expect(response.headers.vary ?? '').not.toContain('Origin');
  });
});
