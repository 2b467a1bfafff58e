/**
 * Results side by side as one Arrow Table: above matrix.ts and arrow.ts, since
 * a column may be a Matrix (and matrix.ts reads Arrow tables through arrow.ts).
 */
import type { Table, Vector } from 'apache-arrow';
import { arrowLibrary } from './arrow-library.js';
import { formatValue, InvalidParameterError } from '../errors.js';
import { guardRead, isArray, MAX_VALUES } from '../validate.js';
import { toArrowVector } from './arrow.js';
import { isObject, isVectorNamed, TEXT, TYPE, vectorToArray, vectorToFloat64, type ArrowVectorLike } from './arrow-vector.js';
import { Matrix } from './matrix.js';

/** A column of toArrowTable: numbers (a typed array keeps its type), strings (a dictionary), an Arrow vector, or a Matrix (one column per feature, `name_0`, `name_1`, ...). */
export type ArrowColumnInput = ArrayLike<number> | readonly string[] | Matrix | ArrowVectorLike;

/**
 * Results side by side as one Arrow Table of the project's apache-arrow, e.g.
 * `toArrowTable({ score: gm.scoreSamples(X), label: gm.predict(X), proba: gm.predictProba(X) })`:
 * the columns score, label, proba_0, proba_1, ...; all of one length.
 */
export function toArrowTable(columns: Record<string, ArrowColumnInput>): Table {
  const { makeVector, Table } = arrowLibrary('toArrowTable');
  if (!isObject(columns) || isArray('columns', columns) || ArrayBuffer.isView(columns)) {
    throw new InvalidParameterError(`toArrowTable takes an object of named columns, got ${formatValue(columns)}`);
  }
  const names = guardRead('columns', () => Object.keys(columns));
  const out: Record<string, Vector> = {};
  let length: number | undefined;
  const add = (name: string, v: Vector) => {
    if (name in out) throw new InvalidParameterError(`toArrowTable: two columns are named ${formatValue(name)}`);
    if (length !== undefined && v.length !== length) throw new InvalidParameterError(`toArrowTable: column ${formatValue(name)} has ${v.length} values, the others ${length}`);
    length = v.length;
    out[name] = v;
  };
  for (const name of names) {
    const c = guardRead(`columns.${name}`, () => columns[name]);
    if (Matrix.isMatrix(c)) {
      for (let j = 0; j < c.nCols; j++) add(`${name}_${j}`, makeVector(c.column(j).slice()));
    } else if (isVectorNamed(c, `columns.${name}`, InvalidParameterError)) {
      // re-made with the project's apache-arrow, whatever copy made it
      const values = c.type.typeId === TYPE.Dictionary || TEXT.has(c.type.typeId) ? vectorToArray(`columns.${name}`, c, MAX_VALUES, InvalidParameterError) : vectorToFloat64(`columns.${name}`, c, InvalidParameterError);
      add(name, toArrowVector(values as ArrayLike<number> | string[]));
    } else {
      add(name, toArrowVector(c as ArrayLike<number>));
    }
  }
  if (length === undefined) throw new InvalidParameterError('toArrowTable needs at least one column');
  return new Table(out);
}

