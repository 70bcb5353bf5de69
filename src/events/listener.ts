import pg from 'pg';
import type { Logger } from 'pino';
import type { FeedSignal } from './feed-signal.js';
import { SEQUENCED_CHANNEL } from './sql.js';

const RETRY_MIN_MS = 500;
// Low, so that after a failover (issue 37) this instance hears the new primary within about 2 s of its answering:
// doubling on to 30 s it stayed deaf up to as long again as the outage (8 s: 7.6 s more). A try is one connection.
const RETRY_MAX_MS = 2_000;

/**
 * LISTENs on its own connection (a session feature, so never a pooled one) for other instances' sequencers,
 * so that readers and the relay here wake as soon as events are numbered anywhere. Without it they still
 * learn the head from this process's sequencer poll, a second later at most.
 */
export class FeedListener {
  private client: pg.Client | undefined;
  private stopped = false;
  private retryMs = RETRY_MIN_MS;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly connection: pg.ClientConfig,
    private readonly signal: FeedSignal,
    private readonly logger: Logger,
  ) {
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ ...this.connection, application_name: 'inventory-service-feed-listener' });
    this.client = client;
    client.on('notification', (message) => {
      const head = Number(message.payload);
      if (Number.isSafeInteger(head)) this.signal.advance(head);
    });
    client.on('error', () => this.reconnect(client));
    client.on('end', () => this.reconnect(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${SEQUENCED_CHANNEL}`);
      this.retryMs = RETRY_MIN_MS;
    } catch (error) {
      this.logger.debug({ err: error }, 'the event feed listener could not connect; retrying');
      this.reconnect(client);
    }
  }

  private reconnect(client: pg.Client): void {
    if (this.stopped || this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    this.retryTimer = setTimeout(() => void this.connect(), this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
