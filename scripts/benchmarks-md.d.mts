/** BENCHMARKS.md's text from bench/BENCHMARKS.template.md and bench/results/bench-*.json. */
export function benchmarksMarkdown(root?: string): string;
