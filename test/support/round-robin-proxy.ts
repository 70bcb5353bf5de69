import http from 'node:http';

export interface RoundRobinProxy {
  readonly url: string;
  /** Requests forwarded to each upstream port, in the order given. */
  readonly hits: readonly number[];
  close(): Promise<void>;
}

// Hop-by-hop headers belong to one connection, not to the message (RFC 9110 7.6.1).
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())));
}

/**
 * A minimal load balancer on loopback: each request goes to the next upstream in turn, with its method, path and
 * query, headers (Host included) and body; the answer comes back as it is. An unreachable upstream is a 502.
 */
export async function startRoundRobinProxy(upstreamPorts: readonly number[]): Promise<RoundRobinProxy> {
  const hits = upstreamPorts.map(() => 0);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  let next = 0;
  const server = http.createServer((req, res) => {
    const index = next++ % upstreamPorts.length;
    hits[index] = (hits[index] ?? 0) + 1;
    const upstream = http.request(
      {
        host: '127.0.0.1',
        port: upstreamPorts[index],
        method: req.method,
        path: req.url,
        headers: endToEnd(req.headers),
        agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.headers));
        answer.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      if (res.headersSent) {
        res.destroy(error);
        return;
      }
      res.writeHead(502, { 'Content-Type': 'text/plain' }).end(`proxy: ${error.message}`);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('the proxy has no address');
  return {
    url: `http://127.0.0.1:${address.port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        agent.destroy();
      }),
  };
}
