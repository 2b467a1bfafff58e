/**
 * A progress bar on stderr, redrawn in place, only when stderr is a terminal:
 * in logs and pipes a bar is noise. Never on stdout, which carries the
 * results; never with --quiet.
 */
import { output } from './io.js';

export function progressBar(label: string): (done: number, total: number, what: string) => void {
  if (!process.stderr.isTTY || output.quiet) return () => {};
  const t0 = performance.now();
  return (done, total, what) => {
    const width = 24;
    const filled = Math.round((width * done) / total);
    const secs = ((performance.now() - t0) / 1000).toFixed(1);
    const line = `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${what} (${secs} s)`;
    process.stderr.write(`\r\x1b[2K${line}${done === total ? '\n' : ''}`);
  };
}
