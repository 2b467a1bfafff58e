/**
 * Compiled (tsc --noEmit, strict) by test/arrow-versions.test.ts in each fresh
 * project: fedmix's published types take that apache-arrow version's tables,
 * vectors and IPC bytes, and its toArrow() is typed as that version's Table;
 * fedmix/experiments' types resolve through the package's exports and take them too.
 */
import * as arrow from 'apache-arrow';
import { adjustedRandScore, distributedEM, GaussianMixture, Matrix, partition, toArrowTable, type MatrixLike } from 'fedmix';
import { trainCommunities, type CommunityClient } from 'fedmix/experiments';

const table: arrow.Table<{ x: arrow.Float64; y: arrow.Float64 }> = new arrow.Table({ x: arrow.makeVector(Float64Array.of(1, 2)), y: arrow.makeVector(Float64Array.of(3, 4)) });
const labels = arrow.vectorFromArray(['a', 'b'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()));
const asData: MatrixLike[] = [table, arrow.tableToIPC(table), table.batches[0]!];
const gm: GaussianMixture = new GaussianMixture({ nComponents: 1 }).fit(table);
const params: arrow.Table = gm.toArrow();
const m: Matrix = Matrix.fromArrow(arrow.tableToIPC(table, 'file'), { columns: ['x'], nulls: 'drop' });
const back: arrow.Table = m.toArrow();
const results: arrow.Table = toArrowTable({ score: gm.scoreSamples(table), label: labels });
partition.dirichlet(labels, { clients: 2, alpha: 1 });
adjustedRandScore(labels, table.getChild('x')!);
distributedEM([table, arrow.tableToIPC(table)], { nComponents: 1 });
const community: CommunityClient[] = [{ id: 'a', X: table, test: { X: arrow.tableToIPC(table), outlier: [0, 1] } }];
const trained: number = trainCommunities(community, 'local').clients[0]!.auc;
export { asData, params, back, results, trained };
