const count = (value: number): string => Math.round(value).toLocaleString('en-US');

/** h:mm:ss */
export function duration(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  const minutes = Math.floor(whole / 60);
  return `${Math.floor(minutes / 60)}:${String(minutes % 60).padStart(2, '0')}:${String(whole % 60).padStart(2, '0')}`;
}

/**
 * What the import command says of an upload: rows sent, their rate, and the time left estimated from the share of
 * the file read so far. Once the whole file is sent the service is still storing it (the set-based inserts and
 * events of one transaction), which the upload's figures cannot measure: from then on the line keeps the rows and
 * rate of the upload as they were and says for how long the service has been storing, instead of a rate that
 * falls and an ETA that grows (issue 26).
 */
export class ImportProgress {
  rows = 0;
  bytes = 0;
  private readonly started: number;
  private sentAt: number | undefined;

  constructor(
    /** The file's size; 0 for a pipe, which has none (then no share and no ETA). */
    private readonly size: number,
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
  }

  /** Seconds since the upload began. */
  get seconds(): number {
    return (this.now() - this.started) / 1000;
  }

  /** The request's body has been handed over whole. */
  sent(): void {
    this.sentAt ??= this.now();
  }

  line(): string {
    if (this.sentAt !== undefined) {
      const sending = (this.sentAt - this.started) / 1000 || 0.001;
      const storing = (this.now() - this.sentAt) / 1000;
      return (
        `${count(this.rows)} rows sent in ${duration(sending)} (${count(this.rows / sending)} rows/s); ` +
        `the service has been storing them for ${duration(storing)}`
      );
    }
    const seconds = this.seconds || 0.001;
    const share = this.size > 0 ? Math.min(1, this.bytes / this.size) : undefined;
    const left =
      share === undefined
        ? `${(this.bytes / 1e6).toFixed(1)} MB`
        : `${(share * 100).toFixed(0)}% of ${(this.size / 1e6).toFixed(1)} MB` +
          (share > 0 && share < 1 ? `  ETA ${duration(seconds / share - seconds)}` : '');
    return `${count(this.rows)} rows  ${count(this.rows / seconds)} rows/s  ${left}`;
  }
}
