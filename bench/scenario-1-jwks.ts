import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { runLoad, warmUp, type LoadResult } from './load.js';
import { stopProcess } from './processes.js';
import { step } from './progress.js';
import { formatNumber, measurementOf, type BenchContext, type Measurement } from './results.js';
import { productSku } from './seed.js';
import { SERVICE_APPLICATION, startService } from './service.js';

const ISSUER = 'https://bench-idp.example/realms/warehouse';
const KID = 'bench-rs256';
/** Distinct tokens for the run that verifies each request's token afresh (the service caches 10,000). */
const FRESH_TOKENS = 6_000;

export interface JwksVariant {
  readonly measurements: Measurement[];
  readonly notes: string[];
  readonly details: Record<string, LoadResult>;
}

/** CPU ms of the service per request of a run. */
function cpuMsPerRequest(result: LoadResult): number | undefined {
  return result.cpu && result.requestsPerSecond > 0
    ? (result.cpu.target / 100 / result.requestsPerSecond) * 1000
    : undefined;
}

/**
 * Scenario 1 with BENCH_JWKS=1 (issue 36): the same lookups against a second instance that verifies RS256 tokens
 * with a key set fetched from a JWKS endpoint (AUTH_JWKS_URL, served here), once with one token per client as a
 * client sends it (verified once, then remembered), once with a token never seen before on every request.
 */
export async function jwksVariant(bench: BenchContext, hs256: LoadResult): Promise<JwksVariant> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwks = JSON.stringify({
    keys: [{ ...publicKey.export({ format: 'jwk' }), kid: KID, use: 'sig', alg: 'RS256' }],
  });
  let jwksFetches = 0;
  const server = createServer((_req, res) => {
    jwksFetches += 1;
    res.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(jwks);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sign = (subject: string): Promise<string> =>
    new SignJWT({ scope: 'inventory' })
      .setProtectedHeader({ alg: 'RS256', kid: KID })
      .setIssuer(ISSUER)
      .setSubject(subject)
      .setExpirationTime('2h')
      .sign(privateKey);
  step(`scenario 1 (BENCH_JWKS): signing ${FRESH_TOKENS.toLocaleString('en-US')} RS256 tokens`);
  const fresh = await Promise.all(Array.from({ length: FRESH_TOKENS }, (_, i) => sign(`bench-${i}`)));
  const service = await startService({
    databaseUrl: bench.db.url,
    jwtSecret: '',
    cpuProfile: bench.config.cpuProfile,
    main: bench.config.serviceMain,
    env: {
      ...bench.config.serviceEnv,
      AUTH_JWKS_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`,
      AUTH_JWT_ISSUER: ISSUER,
    },
    name: 'service-jwks',
  });
  try {
    const lookup = (): { path: string } => ({
      path: `/v1/products?sku=${productSku('P', 1 + Math.floor(Math.random() * bench.config.products))}`,
    });
    const base = {
      baseUrl: service.baseUrl,
      connections: bench.config.connections,
      seconds: bench.config.duration,
      rssPid: service.process.pid,
      database: { pool: bench.db.pool, applicationName: SERVICE_APPLICATION },
    };
    step('scenario 1 (BENCH_JWKS): one RS256 token, verified against the JWKS once');
    const reused = {
      ...base,
      label: 'scenario 1, RS256 via JWKS',
      headers: { authorization: `Bearer ${await sign('bench')}` },
      next: lookup,
    };
    await warmUp(reused, bench.config.warmup);
    const reusedRun = await runLoad(reused);
    step('scenario 1 (BENCH_JWKS): a token never seen before on every request');
    let sent = 0;
    const freshRun = await runLoad({
      ...base,
      label: 'scenario 1, RS256 via JWKS, every token new',
      next: () => ({ ...lookup(), headers: { authorization: `Bearer ${fresh[sent++ % FRESH_TOKENS]!}` } }),
    });
    const cpu = (run: LoadResult): string => `${formatNumber(cpuMsPerRequest(run) ?? Number.NaN, 3)} ms`;
    return {
      measurements: [
        measurementOf('service, RS256 token verified via JWKS (one token per client)', reusedRun),
        measurementOf('service, RS256 via JWKS, a new token on every request', freshRun),
      ],
      notes: [
        `RS256 via JWKS: service CPU ${cpu(reusedRun)} per request with one token per client against ${cpu(hs256)} ` +
          `with HS256 (${formatNumber(reusedRun.requestsPerSecond)} against ${formatNumber(hs256.requestsPerSecond)} ` +
          `req/s); ${cpu(freshRun)} when every request brings a token never seen before ` +
          `(${formatNumber(freshRun.requestsPerSecond)} req/s, ${Math.min(sent, FRESH_TOKENS).toLocaleString('en-US')} ` +
          `distinct tokens for ${sent.toLocaleString('en-US')} requests). The key set was fetched ${jwksFetches} time(s).`,
      ],
      details: { jwksReused: reusedRun, jwksFresh: freshRun },
    };
  } finally {
    await stopProcess(service.process);
    await new Promise((resolve) => server.close(resolve));
  }
}
