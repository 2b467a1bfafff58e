/** Types of fuzz-servers.mjs (plain JavaScript, shared with scripts/fuzz-servers.mjs). */
export interface FuzzReport {
  tried: number;
  excluded: number;
  kept: number;
  violations: string[];
  byMutation: Record<string, { excluded: number; kept: number }>;
}
export declare const MUTATIONS: string[];
export declare function fuzzServers(f: unknown, options?: { seed?: number; perServer?: number; servers?: string[]; heap?: () => number }): Record<string, FuzzReport>;
export interface Federation {
  clients(): Array<import('../../ts/index.js').ClientRole & { dispose?(): void }>;
  server(): import('../../ts/index.js').ServerRole & { dispose?(): void };
  numbers(model: unknown): number[];
  dispose(model: unknown): void;
  target?: string;
}
export declare function federations(f: unknown): Record<string, Federation>;
