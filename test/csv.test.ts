/**
 * CSV as fedmix reads it, at the sizes the limits allow: column lookups by
 * name in constant time (a table of 500,000 columns is read in seconds; a
 * lookup by scanning the names took minutes), cells held as numbers (a
 * CellTable: decimal cells as doubles, other cells as text), and a file of
 * column names alone refused as such.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { csvToMatrix, InvalidDataError, InvalidParameterError, parseCsv } from '../ts/index.js';
import { labelledFromCsv, subclassDataFromCsv } from '../ts/experiments/index.js';
import { readCsvFile, readDataFile } from '../ts/cli/data.js';
import { cellTableOf } from '../ts/data/csv.js';
import { labelledFromCells } from '../ts/experiments/dataset.js';

const dir = mkdtempSync(join(tmpdir(), 'fedmix-csv-'));

describe('a wide CSV', () => {
  // no timed assertion: with columns looked up by scanning the names (quadratic), each of the two reads below
  // took 75 s of CPU at 300,000 columns and would take about 200 s at 500,000, past the suite's 120 s
  // timeout; each takes about 2 s
  test('500,000 columns: parseCsv + csvToMatrix, and the CLI streaming reader + the labelled data, every value in place', async () => {
    const d = 500_000;
    // two rows: feature j holds j / 8 and j / 8 + 1 (exact in binary), then a class column
    const header = Array.from({ length: d }, (_, j) => `f${j}`).join(',') + ',label';
    const row = (i: number) => Array.from({ length: d }, (_, j) => String(j / 8 + i)).join(',') + `,${i === 0 ? 'a' : 'b'}`;
    const text = [header, row(0), row(1)].join('\n') + '\n';

    const { X, names } = csvToMatrix(parseCsv(text), { exclude: ['label'] });
    expect([X.nRows, X.nCols, names.length, names[d - 1]]).toEqual([2, d, d, `f${d - 1}`]);
    expect([X.get(0, 0), X.get(1, 0), X.get(0, d - 1), X.get(1, d - 1)]).toEqual([0, 1, (d - 1) / 8, (d - 1) / 8 + 1]);

    const path = join(dir, 'wide.csv');
    writeFileSync(path, text);
    const table = await readCsvFile(path);
    const labelled = labelledFromCells(table, { label: 'label' });
    expect(Array.from(labelled.X.data)).toEqual(Array.from(X.data));
    expect(labelled.featureNames).toEqual(names);
    expect(labelled.classNames).toEqual(['a', 'b']);
    expect(Array.from(labelled.labels!)).toEqual([0, 1]);
    // a missing column is named, with the first 20 of the 500,001 it could have been
    expect(() => table.column('class')).toThrow(
      new InvalidParameterError(`the CSV has no column "class"; its columns are ${Array.from({ length: 20 }, (_, j) => `f${j}`).join(', ')}, ... (500001 in all)`),
    );
  });
});

describe('the CLI streaming reader', () => {
  test('hands Papa Parse pieces that end at line ends (\\n, \\r\\n or \\r), long lines whole, and reads what parseCsv reads', async () => {
    const { Readable } = await import('node:stream');
    const { lineChunks } = await import('../ts/cli/data.js');
    const pieces = async (chunks: string[]) => {
      const out: string[] = [];
      for await (const piece of Readable.from(chunks).pipe(lineChunks())) out.push(piece as string);
      return out;
    };
    expect(await pieces(['a,b\n1,', '2\n3', ',4', '\n5,6'])).toEqual(['a,b\n', '1,2\n', '3,4\n', '5,6']);
    expect(await pieces(['a,b\r', '\n1,2\r\n3', ',4'])).toEqual(['a,b\r', '\n1,2\r\n', '3,4']);
    expect(await pieces(['x,', 'y,', 'z'])).toEqual(['x,y,z']);
    for (const text of ['a,b\r1,2\r3,"4\r5"\r', 'a,b\r\n1,2\r\n3,"4\r\n5"', 'a,b\n1,"2\n3"\n']) {
      const path = join(dir, 'ends.csv');
      writeFileSync(path, text);
      const table = await readCsvFile(path);
      expect({ names: table.names, columns: [0, 1].map((j) => table.texts(j)), nRows: table.nRows }).toEqual(parseCsv(text));
    }
  });
});

describe('cells held as numbers', () => {
  test('decimal cells are numbers: as text, a class or category reads them in their shortest form; other cells keep their text', () => {
    const table = cellTableOf('x,y,label\n1.0,2,01\n 2.50 ,abc,1\n3e2,,"a, b"\n');
    expect(table.texts(0)).toEqual(['1', '2.5', '300']);
    expect(table.texts(1)).toEqual(['2', 'abc', '']);
    expect(table.texts(2)).toEqual(['1', '1', 'a, b']);
    expect(Array.from(table.toMatrix({ columns: ['x'] }).X.data)).toEqual([1, 2.5, 300]);
    // "01" and "1" are one class, as in a column of numbers
    expect(labelledFromCsv('x,label\n1,01\n2,1\n3,2\n', { label: 'label' }).classNames).toEqual(['1', '2']);
  });

  test('a cell that is not a finite number is named with its row and its text, as parseCsv and csvToMatrix name it', () => {
    for (const [cell, kind] of [['abc', 'a number'], ['1e999', 'a finite number'], ['', 'a number']]) {
      const text = `a,b\n1,2\n3,${cell}\n`;
      const message = `column "b", data row 2: "${cell}" is not ${kind}; exclude the column or clean the file`;
      expect(() => cellTableOf(text).toMatrix()).toThrow(new InvalidDataError(message));
      expect(() => csvToMatrix(parseCsv(text))).toThrow(new InvalidDataError(message));
    }
  });

  test('columns asked for twice come twice; two columns of one name are both read, each its own', () => {
    expect(Array.from(csvToMatrix(parseCsv('a,b\n1,2\n3,4\n'), { columns: ['b', 'a', 'b'] }).X.data)).toEqual([2, 4, 1, 3, 2, 4]);
    const { X, names } = cellTableOf('x,x,y\n1,2,3\n').toMatrix();
    expect([names, Array.from(X.data)]).toEqual([['x', 'x', 'y'], [1, 2, 3]]);
  });

  test('an Arrow file reads to the same cells as its CSV', async () => {
    const arrow = await import('apache-arrow');
    const text = 'x,y,label\n0.5,1,a\n-2,3.25,b\n';
    const path = join(dir, 'small.arrow');
    writeFileSync(path, arrow.tableToIPC(arrow.tableFromArrays({ x: Float64Array.of(0.5, -2), y: Int32Array.of(1, 3), label: ['a', 'b'] }), 'file'));
    const fromArrow = await readDataFile(path);
    const fromCsv = cellTableOf(text.replace('3.25', '3'));
    expect([0, 1, 2].map((j) => fromArrow.texts(j))).toEqual([0, 1, 2].map((j) => fromCsv.texts(j)));
    expect(fromArrow.toMatrix({ exclude: ['label'] }).X.data).toEqual(fromCsv.toMatrix({ exclude: ['label'] }).X.data);
  });
});

describe('a CSV of column names alone', () => {
  test('is refused as having no data rows, not for what an empty column of labels lacks', async () => {
    const header = 'x0,x1,label\n';
    const why = /^the CSV has column names but no data rows$/;
    expect(() => labelledFromCsv(header, { label: 'label' })).toThrow(InvalidDataError);
    expect(() => labelledFromCsv(header, { label: 'label' })).toThrow(why);
    expect(() => labelledFromCsv(header)).toThrow(why);
    expect(() => subclassDataFromCsv(header, { subclass: 'label', groups: 'a+b' })).toThrow(why);
    const path = join(dir, 'header.csv');
    writeFileSync(path, header);
    await expect(readDataFile(path)).rejects.toThrow(new InvalidDataError(`${path} has column names but no data rows`));
    // the library's parseCsv still reads it: a table of no rows is text, not yet data
    expect(parseCsv(header)).toEqual({ names: ['x0', 'x1', 'label'], columns: [[], [], []], nRows: 0 });
  });
});
