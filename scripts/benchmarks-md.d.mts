/** BENCHMARKS.md's text from bench/BENCHMARKS.template.md and the bench-*.json files of `results` (default: bench/results). */
export function benchmarksMarkdown(root?: string, results?: string): string;
