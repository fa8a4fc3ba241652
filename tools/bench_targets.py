#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tabulates the performance targets over several `xnorcl-bench layers --json` runs of one build.

One run decides PASS or MISS; on a shared or noisy machine the same build moves across the line
between runs, so this shows each target's value in every run, its median and how many runs passed.

    for i in 1 2 3 4 5; do build/tools/bench/xnorcl-bench layers --json run$i.json; done
    /usr/bin/python3 tools/bench_targets.py run*.json
"""
import argparse
import json
import math
import statistics
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="JSON files written by xnorcl-bench layers --json")
    args = parser.parse_args()

    runs = []
    for path in args.runs:
        with open(path) as f:
            run = json.load(f)
        if run.get("schema") != 1:
            sys.exit(f"{path}: not an xnorcl-bench schema 1 file")
        runs.append(run)

    order, values = [], {}
    for run in runs:
        for t in run["targets"]:
            if t["status"] == "N/A":
                continue
            key = (t["id"], t.get("layer", ""))
            if key not in values:
                order.append(key)
                values[key] = []
            values[key].append((t["measured"], t["status"], t["unit"]))

    devices = sorted({r["device"] for r in runs})
    print(f"{len(runs)} runs of xnorcl-bench layers on {', '.join(devices)}")
    noisy = [str(i + 1) for i, r in enumerate(runs) if (r.get("noise") or {}).get("noisy")]
    if noisy:
        print(f"noisy runs (targets not judged, counted as not passed): {', '.join(noisy)}")
    print(f"{'target':28s} {'layer':15s} " + " ".join(f"{'run ' + str(i + 1):>8s}" for i in range(len(runs))) +
          f" {'median':>8s}  passed")
    for key in order:
        v = values[key]
        measured = [m for m, _, _ in v if m is not None and not math.isnan(m)]
        median = statistics.median(measured) if measured else float("nan")
        unit = v[0][2]
        cells = " ".join(f"{m:7.2f}{unit:1s}" if m is not None and not math.isnan(m) else f"{'-':>8s}"
                         for m, _, _ in v)
        passed = sum(s == "PASS" for _, s, _ in v)
        print(f"{key[0]:28s} {key[1]:15s} {cells} {median:7.2f}{unit:1s}  {passed}/{len(v)}")


if __name__ == "__main__":
    main()
