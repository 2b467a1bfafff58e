/** A plain-text table: the first column left-aligned, the others right-aligned. */
export function textTable(head: string[], rows: string[][]): string[] {
  const widths = head.map((h, j) => Math.max(h.length, ...rows.map((row) => row[j]!.length)));
  const line = (cells: string[]) => cells.map((c, j) => (j === 0 ? c.padEnd(widths[j]!) : c.padStart(widths[j]!))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}
