#!/usr/bin/env python3
"""How far runs of one system on one workload spread, by the length of
their measured window, over every committed report (reports/*/bench.json
and one level below). A group is a workload and one of pipe, pipe-flush,
reo, reo-baseline with three or more verified runs; its spread is its
fastest run's records/s over its slowest; its window is the median of
its runs' saturation_sec. Run from the repository root."""
import glob
import json
import statistics as st
from collections import defaultdict

rows = []
for f in sorted(glob.glob("reports/*/bench.json") + glob.glob("reports/*/*/bench.json")):
    try:
        r = json.load(open(f))
    except (OSError, ValueError):
        continue
    g = defaultdict(list)
    for x in r.get("results") or []:
        if (x.get("records_per_sec") and x.get("verified") and x.get("saturation_sec")
                and x["system"] in ("pipe", "pipe-flush", "reo", "reo-baseline")):
            g[(x["workload"]["name"], x["system"])].append((x["records_per_sec"], x["saturation_sec"]))
    for runs in g.values():
        if len(runs) >= 3:
            rates = [v for v, _ in runs]
            rows.append((st.median(s for _, s in runs), max(rates) / min(rates)))

print(f"{len(rows)} groups")
for lo, hi in [(0, 0.6), (0.6, 1), (1, 2), (2, 4), (4, float("inf"))]:
    s = sorted(sp for w, sp in rows if lo <= w < hi)
    if s:
        print(f"window {lo}-{hi} s: {len(s)} groups, spread median {st.median(s):.2f}x, "
              f"90th percentile {s[int(len(s) * 0.9)]:.2f}x, max {max(s):.2f}x")
