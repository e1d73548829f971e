/**
 * Progress of long commands (upgrade, import, rebuild, replay) on stderr: on a terminal a bar
 * redrawn in place; otherwise a line every few seconds and one at the end, so logs of piped runs
 * stay short. stdout is left to the command's report.
 */
export interface ProgressSnapshot {
  label: string;
  done: number;
  /** null: unknown (no bar, no ETA). */
  total: number | null;
  elapsedMs: number;
}

const number = new Intl.NumberFormat('en-US');

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** `label  [=====>     ] 1,234/5,000  25%  410/s  ETA 9s` (the bar only when `barWidth` > 0). */
export function formatProgress(p: ProgressSnapshot, barWidth = 0): string {
  const rate = p.elapsedMs > 0 ? (p.done * 1000) / p.elapsedMs : 0;
  const parts = [p.label];
  if (p.total !== null && p.total > 0) {
    const ratio = Math.min(1, p.done / p.total);
    if (barWidth > 0) {
      const filled = Math.floor(ratio * barWidth);
      parts.push(`[${'='.repeat(filled)}${filled < barWidth ? '>' : ''}${' '.repeat(Math.max(0, barWidth - filled - 1))}]`);
    }
    parts.push(`${number.format(p.done)}/${number.format(p.total)}`, `${Math.floor(ratio * 100)}%`);
  } else {
    parts.push(number.format(p.done));
  }
  parts.push(`${number.format(Math.round(rate))}/s`);
  if (p.total !== null && rate > 0 && p.done < p.total) parts.push(`ETA ${duration(((p.total - p.done) / rate) * 1000)}`);
  else if (p.total !== null && p.done >= p.total) parts.push(`in ${duration(p.elapsedMs)}`);
  return parts.join('  ');
}

export interface Progress {
  /** `n` more done. */
  tick(n?: number): void;
  /** `done` in all (e.g. a position in the log). */
  update(done: number): void;
  /** The total became known or changed. */
  total(total: number | null): void;
  /** Ends the line (prints the final figures). */
  finish(): void;
}

export interface ProgressOptions {
  stream?: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Non-terminal output: a line at most this often. */
  lineEveryMs?: number;
  now?: () => number;
}

/** A progress display for `label` with `total` steps (null: unknown). */
export function startProgress(label: string, total: number | null, options: ProgressOptions = {}): Progress {
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? Date.now;
  const tty = stream.isTTY === true;
  const every = tty ? 100 : (options.lineEveryMs ?? 5000);
  const started = now();
  let done = 0;
  let last = started;
  let finished = false;
  let drawnDone = -1;
  const snapshot = (): ProgressSnapshot => ({ label, done, total, elapsedMs: now() - started });
  const draw = (final: boolean) => {
    drawnDone = done;
    if (tty) stream.write(`\r${formatProgress(snapshot(), 30)}\u001b[K${final ? '\n' : ''}`);
    else stream.write(`${formatProgress(snapshot())}\n`);
  };
  return {
    tick(n = 1) {
      done += n;
      const t = now();
      if (t - last >= every) {
        last = t;
        draw(false);
      }
    },
    update(value) {
      this.tick(value - done);
    },
    total(value) {
      total = value;
    },
    finish() {
      if (finished) return;
      finished = true;
      // Off a terminal the line just written may already say it all.
      if (tty || drawnDone !== done) draw(true);
    },
  };
}
