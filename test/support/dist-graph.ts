/**
 * The files of the built package (dist/) that an entry loads statically, for
 * tests that check what an entry's module graph holds (test/package-size.test.ts,
 * test/arrow-versions.test.ts). Needs `bash scripts/setup.sh` first (it builds dist/).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));

/** Every file of dist/ that `entry` loads (import/export from, import() or require of a relative path: its lazy chunks too), with its text. */
export function moduleGraph(entry: string): Map<string, string> {
  const seen = new Map<string, string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    const code = readFileSync(file, 'utf8');
    seen.set(file, code);
    const relative = /(?:(?:^|[;\s])(?:import|export)\s*(?:[^'"`;]*?\sfrom\s*)?|\brequire\(|\bimport\()\s*["'](\.\.?\/[^"']+)["']/g;
    for (const m of code.matchAll(relative)) visit(join(dirname(file), m[1]!));
  };
  visit(join(DIST, entry));
  return seen;
}
