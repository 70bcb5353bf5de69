const BAR_WIDTH = 30;

export interface Progress {
  /** Sets how much is done (of the total given at the start) and redraws when that changed visibly. */
  update(done: number, detail?: string): void;
  finish(detail?: string): void;
}

function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * A progress bar on stderr. On a terminal it redraws one line; in a log (no TTY) it prints a line every 10 %,
 * so a person following the run sees that it is alive either way.
 */
export function startProgress(label: string, total: number): Progress {
  const tty = process.stderr.isTTY;
  const started = Date.now();
  let lastDrawn = -1;
  const draw = (done: number, detail: string, final: boolean): void => {
    const fraction = total > 0 ? Math.min(1, done / total) : 1;
    const percent = Math.floor(fraction * 100);
    if (!final && (tty ? percent === lastDrawn : Math.floor(percent / 10) === Math.floor(lastDrawn / 10))) return;
    lastDrawn = percent;
    const filled = Math.round(fraction * BAR_WIDTH);
    const bar = `[${'#'.repeat(filled)}${' '.repeat(BAR_WIDTH - filled)}]`;
    const line = `${label} ${bar} ${String(percent).padStart(3)}% ${formatSeconds(Date.now() - started)}${detail ? `  ${detail}` : ''}`;
    if (tty) process.stderr.write(`\r\x1b[2K${line}${final ? '\n' : ''}`);
    else process.stderr.write(`${line}\n`);
  };
  draw(0, '', false);
  let lastDetail = '';
  return {
    update(done: number, detail = ''): void {
      lastDetail = detail;
      draw(done, detail, false);
    },
    finish(detail?: string): void {
      draw(total, detail ?? lastDetail, true);
    },
  };
}

/** One line on stderr for a step that has no measurable progress. */
export function step(message: string): void {
  process.stderr.write(`${message}\n`);
}
