/**
 * Ranking metrics for anomaly detection, as scikit-learn computes them:
 * average precision (area under the precision-recall curve, step-wise, no
 * interpolation) and ROC AUC (trapezoids), both over distinct score thresholds
 * so that tied scores are handled exactly as sklearn.metrics does.
 */
import type { ArrowVectorLike } from '../data/arrow.js';
import { formatValue, InvalidDataError } from '../errors.js';
import { LIMITS, readArray } from '../validate.js';

/** Cumulative true/false positives at each distinct threshold, scores descending. */
function thresholdCounts(labels: ArrayLike<number> | ArrowVectorLike, values: ArrayLike<number> | ArrowVectorLike): { tps: number[]; fps: number[] } {
  const yTrue = readArray('labels', labels, LIMITS.values, InvalidDataError);
  const scores = readArray('scores', values, LIMITS.values, InvalidDataError) as number[];
  const n = yTrue.length;
  if (n === 0 || scores.length !== n) {
    throw new InvalidDataError(`labels and scores must be non-empty and of equal length, got ${n} and ${scores.length}`);
  }
  for (let i = 0; i < n; i++) {
    const y = yTrue[i];
    if (y !== 0 && y !== 1) throw new InvalidDataError(`labels must be 0 or 1; found ${formatValue(y)} at position ${i}`);
    if (typeof scores[i] !== 'number' || !Number.isFinite(scores[i])) throw new InvalidDataError(`scores must be finite numbers; found ${formatValue(scores[i])} at position ${i}`);
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => scores[b]! - scores[a]!);
  const tps: number[] = [];
  const fps: number[] = [];
  let tp = 0;
  let fp = 0;
  for (let r = 0; r < n; r++) {
    const i = order[r]!;
    if (yTrue[i] === 1) tp++;
    else fp++;
    const last = r === n - 1 || scores[order[r + 1]!] !== scores[i];
    if (last) {
      tps.push(tp);
      fps.push(fp);
    }
  }
  return { tps, fps };
}

/** Average precision (AUC-PR) of `scores` for the positive class 1 in `yTrue`. */
export function averagePrecision(yTrue: ArrayLike<number> | ArrowVectorLike, scores: ArrayLike<number> | ArrowVectorLike): number {
  const { tps, fps } = thresholdCounts(yTrue, scores);
  const positives = tps[tps.length - 1]!;
  if (positives === 0) throw new InvalidDataError('average precision needs at least one positive label');
  let ap = 0;
  let prevRecall = 0;
  for (let t = 0; t < tps.length; t++) {
    const recall = tps[t]! / positives;
    const precision = tps[t]! / (tps[t]! + fps[t]!);
    ap += (recall - prevRecall) * precision;
    prevRecall = recall;
  }
  return ap;
}

/** Area under the ROC curve of `scores` for the positive class 1 in `yTrue`. */
export function rocAuc(yTrue: ArrayLike<number> | ArrowVectorLike, scores: ArrayLike<number> | ArrowVectorLike): number {
  const { tps, fps } = thresholdCounts(yTrue, scores);
  const p = tps[tps.length - 1]!;
  const q = fps[fps.length - 1]!;
  if (p === 0 || q === 0) throw new InvalidDataError('ROC AUC needs both positive and negative labels');
  let auc = 0;
  let x0 = 0;
  let y0 = 0;
  for (let t = 0; t < tps.length; t++) {
    const x1 = fps[t]! / q;
    const y1 = tps[t]! / p;
    auc += ((x1 - x0) * (y0 + y1)) / 2;
    x0 = x1;
    y0 = y1;
  }
  return auc;
}
