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
