import net from 'node:net';

export interface TcpRoundRobin {
  readonly port: number;
  /** Connections handed to each upstream port, in the order given. */
  readonly connections: readonly number[];
  /** Sends new connections to `port` from now on and cuts the open ones, as a moved address does. */
  moveTo(port: number): void;
  close(): Promise<void>;
}

/**
 * A plain TCP balancer on loopback, as a Kubernetes Service spreads connections: each new connection goes to the
 * next upstream in turn and stays with it; bytes are passed through untouched.
 */
export async function startTcpRoundRobin(upstreams: readonly number[]): Promise<TcpRoundRobin> {
  let upstreamPorts = [...upstreams];
  const connections = upstreamPorts.map(() => 0);
  const sockets = new Set<net.Socket>();
  let next = 0;
  const server = net.createServer((client) => {
    const index = next++ % upstreamPorts.length;
    connections[index] = (connections[index] ?? 0) + 1;
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
    moveTo(port) {
      upstreamPorts = [port];
      for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
