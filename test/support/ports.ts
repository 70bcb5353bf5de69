import net from 'node:net';

function bindable(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : undefined));
    });
  });
}

/** A loopback port that was free a moment ago: nothing listens on it (until someone else takes it). */
export async function closedPort(): Promise<number> {
  const port = await bindable(0);
  if (port === undefined) throw new Error('no free port');
  return port;
}

/**
 * A free port below Linux's ephemeral range (32768+), for a process that binds it only seconds later: ports
 * handed out for `listen(0)` by every other process on the machine (embedded databases, other test runs) come
 * from that range, so one of them taking this port in the meantime is unlikely.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const candidate = 20_000 + Math.floor(Math.random() * 12_000);
    if ((await bindable(candidate)) !== undefined) return candidate;
  }
  return closedPort();
}
