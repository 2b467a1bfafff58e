/** Types of xorshift.mjs (plain JavaScript, shared with scripts/). */
export declare function xorshift32(seed: number): () => number;
