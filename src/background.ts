/**
 * Background work on a timer (ARCHITECTURE: the sequencer's and relay's shape): one run at a time per process,
 * and `stop` waits for the run under way, so the pool can close after.
 */
export class PeriodicWork {
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly timer: NodeJS.Timeout;

  /** `work` must not throw (it reports its own failures) and should end early once `isStopped()`. */
  constructor(
    private readonly work: () => Promise<void>,
    everyMs: number,
  ) {
    this.timer = setInterval(() => void this.run(), everyMs);
    this.timer.unref();
  }

  isStopped(): boolean {
    return this.stopped;
  }

  /** A run now, or the one under way; nothing once stopped. */
  run(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.running ??= this.work().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }
}
