import { EventEmitter } from 'node:events';

/**
 * What this process knows of the newest numbered event (the feed's head), learnt from its own sequencer,
 * from other instances' notifications and from polling. Long-polling readers and the relay wait on it.
 */
export class FeedSignal {
  private known = 0;
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  get head(): number {
    return this.known;
  }

  advance(head: number): void {
    if (head <= this.known) return;
    this.known = head;
    this.emitter.emit('advanced', head);
  }

  onAdvance(listener: (head: number) => void): () => void {
    this.emitter.on('advanced', listener);
    return () => this.emitter.off('advanced', listener);
  }

  /** Resolves once the head passes `position`, after `timeoutMs`, or when `abort` fires, whichever is first. */
  waitBeyond(position: number, timeoutMs: number, abort?: AbortSignal): Promise<void> {
    if (this.known > position || abort?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        stopListening();
        abort?.removeEventListener('abort', finish);
        resolve();
      };
      const timer = setTimeout(finish, timeoutMs);
      const stopListening = this.onAdvance((head) => {
        if (head > position) finish();
      });
      abort?.addEventListener('abort', finish, { once: true });
    });
  }
}
