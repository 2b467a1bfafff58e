/**
 * Fixes a class's `name` to the one it is exported as. A bundler turns a class
 * that refers to itself into `var Matrix = class _Matrix`, and a minifier
 * renames it: either way Matrix would print as `_Matrix` or `e`. Called from a
 * static block of each such class, and for every error class in ts/errors.ts
 * (esbuild's keepNames would name every function of the library, and its calls
 * would keep them all alive in a user's bundle).
 */
export function keepClassName(cls: object, name: string): void {
  Object.defineProperty(cls, 'name', { value: name, configurable: true });
}
