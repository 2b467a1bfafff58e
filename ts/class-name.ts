/**
 * Fixes a class's `name` to the one it is exported as. A bundler turns a class
 * that refers to itself into `var Matrix = class _Matrix`, and a minifier
 * renames it: either way Matrix would print as `_Matrix` or `e`. Called from a
 * static block of each such class (esbuild's keepNames would do the same for
 * every function of the library, and keep them all alive in a user's bundle).
 */
export function keepClassName(cls: object, name: string): void {
  Object.defineProperty(cls, 'name', { value: name, configurable: true });
}
