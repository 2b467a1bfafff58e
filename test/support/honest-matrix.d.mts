/** Types of honest-matrix.mjs (plain JavaScript, shared with scripts/honest-matrix.mjs). */
export interface Cell {
  algorithm: string;
  variant: Record<string, unknown>;
  dataset: string;
  partition: string;
  seed: number;
}
export interface Exclusion {
  client: string;
  round: number;
  reason: string;
  kind: 'refused-by-check' | 'cannot-take-part';
}
export interface CellResult extends Cell {
  clients?: number;
  excluded: Exclusion[];
  error?: string;
  notApplicable?: string;
  metric?: string;
  higherIsBetter?: boolean;
  federated?: number;
  central?: number;
  gap?: number;
  note?: string;
  seconds: number;
}
export declare const DATASETS: string[];
export declare const PARTITIONS: string[];
export declare const ALGORITHMS: Record<string, { variants: Record<string, unknown>[]; partitions?: string[]; clients?: number }>;
export declare function cells(options?: { algorithms?: string[]; datasets?: string[]; partitions?: string[]; seeds?: number[] }): Cell[];
export declare function runCell(f: unknown, cell: Cell): CellResult;
export declare function summarize(results: CellResult[]): Array<{ algorithm: string; cells: number; notApplicable: number; refusedByCheck: number; cannotTakePart: number; errors: number; gaps: number[] }>;
export interface MatrixDataset {
  X: { nRows: number; nCols: number; selectRows(rows: ArrayLike<number>): unknown };
  labels: Int32Array;
  testX: unknown;
  testLabels: Int32Array;
  nClasses: number;
}
export declare function dataset(f: unknown, name: string): MatrixDataset;
export declare function deal(f: unknown, data: MatrixDataset, scheme: string, clients: number, seed: number): Int32Array[];
