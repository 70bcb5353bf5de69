import net from 'node:net';

export interface TcpRoundRobin {
  readonly port: number;
  /** Connections handed to each upstream port, in the order given. */
  readonly connections: readonly number[];
  close(): Promise<void>;
}

/**
 * A plain TCP balancer on loopback, as a Kubernetes Service spreads connections: each new connection goes to the
 * next upstream in turn and stays with it; bytes are passed through untouched.
 */
export async function startTcpRoundRobin(upstreamPorts: readonly number[]): Promise<TcpRoundRobin> {
  const connections = upstreamPorts.map(() => 0);
  const sockets = new Set<net.Socket>();
  let next = 0;
  const server = net.createServer((client) => {
    const index = next++ % upstreamPorts.length;
    connections[index]!++;
    const upstream = net.connect({ host: '127.0.0.1', port: upstreamPorts[index]! });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
