#!/usr/bin/env python3
"""Combines the visits of `ab_ratio.sh` into one before/after table.

Each visit's table gives, per row, ns/inst at the two sizes and the median
paired ratio. Per binary and row, this takes the median over the visits of
each figure, then prints before, after and after / before (markdown).

    ab_ratio_table.py OUT_DIR BEFORE_BINARY AFTER_BINARY
"""
import glob
import os
import statistics
import sys


def visits(out, binary):
    """{row: [(small, large, ratio), ...]} over the visits of `binary`."""
    rows = {}
    for path in sorted(glob.glob(os.path.join(out, f"*-{binary}.md"))):
        for line in open(path):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 4 or not cells[0].startswith("`"):
                continue
            try:
                small, large, ratio = (float(c.strip("*")) for c in cells[1:4])
            except ValueError:
                continue
            rows.setdefault(cells[0], []).append((small, large, ratio))
    return rows


def main():
    out, before, after = sys.argv[1:4]
    b, a = visits(out, before), visits(out, after)
    print(f"visits: before {max((len(v) for v in b.values()), default=0)}, "
          f"after {max((len(v) for v in a.values()), default=0)}")
    print()
    print("| row | before 10^3 | before 10^6 | before ratio | after 10^3 | after 10^6 | after ratio "
          "| after / before at 10^6 | after / before, ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in b:
        if row not in a:
            continue
        bm = [statistics.median(x) for x in zip(*b[row])]
        am = [statistics.median(x) for x in zip(*a[row])]
        print(f"| {row} | {bm[0]:.1f} | {bm[1]:.1f} | {bm[2]:.2f} | {am[0]:.1f} | {am[1]:.1f} | {am[2]:.2f} "
              f"| {am[1] / bm[1]:.2f} | {am[2] / bm[2]:.2f} |")


if __name__ == "__main__":
    main()
