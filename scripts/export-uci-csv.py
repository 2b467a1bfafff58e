#!/usr/bin/python3
"""Writes small UCI class-labelled sets as CSV (header row, numeric features,
last column `label`, the layout of the shared datasets) for tests and
experiments: glass, vowel and vehicle from Debian's r-cran-mlbench (.rda, read
with Debian's python3-rdata), digits (8x8) from Debian's python3-sklearn.

usage: /usr/bin/python3 scripts/export-uci-csv.py [OUT_DIR]   (default: .datasets)

Vowel's V1 is the speaker (a factor of 15 speakers), not a measurement: it is
left out, the nine others are the features. Glass's Type and Vehicle's Class
name the classes; digits' last column is the digit.
Origins and licences: UCI Glass Identification, Connectionist Bench (Vowel),
Statlog (Vehicle Silhouettes), Optical Recognition of Handwritten Digits; all
CC BY 4.0.
"""
import csv
import gzip
import os
import sys
import warnings

MLBENCH = "/usr/lib/R/site-library/mlbench/data"
DIGITS = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"


def read_rda(name):
    import rdata

    with warnings.catch_warnings():
        # mlbench's files declare no string encoding; their labels are ASCII
        warnings.simplefilter("ignore")
        parsed = rdata.parser.parse_file(os.path.join(MLBENCH, name + ".rda"))
        return rdata.conversion.convert(parsed)[name]


def write(path, header, rows):
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    os.replace(tmp, path)


def export_mlbench(out, name, file, label, drop=()):
    df = read_rda(name)
    features = [c for c in df.columns if c != label and c not in drop]
    rows = [[repr(float(v)) for v in r[features]] + [str(r[label])] for _, r in df.iterrows()]
    write(os.path.join(out, file), features + ["label"], rows)
    return len(rows), len(features), df[label].nunique()


def export_digits(out):
    with gzip.open(DIGITS, "rt") as f:
        data = [line.strip().split(",") for line in f if line.strip()]
    d = len(data[0]) - 1
    rows = [[str(float(v)) for v in r[:d]] + [str(int(float(r[d])))] for r in data]
    write(os.path.join(out, "digits.csv"), [f"pixel_{i}" for i in range(d)] + ["label"], rows)
    return len(rows), d, len({r[-1] for r in rows})


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else ".datasets"
    os.makedirs(out, exist_ok=True)
    done = {
        "glass.csv": export_mlbench(out, "Glass", "glass.csv", "Type"),
        "vowel.csv": export_mlbench(out, "Vowel", "vowel.csv", "Class", drop=("V1",)),
        "vehicle.csv": export_mlbench(out, "Vehicle", "vehicle.csv", "Class"),
        "digits.csv": export_digits(out),
    }
    for file, (n, d, k) in done.items():
        print(f"{os.path.join(out, file)}: {n} rows x {d} features, {k} classes")


if __name__ == "__main__":
    main()
