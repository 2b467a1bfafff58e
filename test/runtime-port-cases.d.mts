/** Types of runtime-port-cases.mjs (plain JavaScript, shared with scripts/record-runtime-port.mjs). */
export declare function runtimePortCases(f: unknown): Record<string, () => unknown>;
