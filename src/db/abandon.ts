import pg from 'pg';

interface ClientInternals {
  readonly processID: number;
  readonly secretKey: number;
  readonly connectionParameters: { readonly host: string; readonly port: number };
  readonly connection: { readonly stream: { destroy(): void } };
}

interface CancelConnection {
  on(event: string, listener: (...args: unknown[]) => void): void;
  connect(port: number | string, host?: string): void;
  cancel(processID: number, secretKey: number): void;
}

const { Connection } = pg as unknown as { Connection: new () => CancelConnection };

/**
 * Gives up a checked-out connection in the middle of its work (its client went away, D38): the statement it runs is
 * cancelled by the protocol's CancelRequest on a connection of its own (no pool connection needed, and PgBouncer
 * forwards it to the right server), and its socket is closed, so the server rolls the transaction back and ends the
 * session with its temporary tables, and every later statement on it fails at once instead of running.
 */
export function abandonConnection(client: pg.PoolClient): void {
  const { processID, secretKey, connectionParameters, connection } = client as unknown as ClientInternals;
  const { host, port } = connectionParameters;
  const canceller = new Connection();
  canceller.on('error', () => undefined);
  canceller.on('connect', () => canceller.cancel(processID, secretKey));
  if (host.startsWith('/')) canceller.connect(`${host}/.s.PGSQL.${port}`);
  else canceller.connect(port, host);
  connection.stream.destroy();
}
