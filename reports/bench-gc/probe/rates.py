#!/usr/bin/env python3
"""rates.py OUT...: for each run directory written by run.sh and each latency
run in it (OUT/latency-samples/*.csv, whose source timestamps bound the
measured window), each broker's CPU and requests per second by type over
that window, from the probe's snapshots (OUT/jmx.log)."""
import csv
import glob
import os
import sys


def load_jmx(out):
    snaps = {}
    cur = None
    for l in open(os.path.join(out, "jmx.log")):
        p = l.split()
        if not p:
            continue
        if p[0] == "time":
            cur = [int(p[1]), {}, 0]
            snaps.setdefault(p[3], []).append(cur)
        elif p[0] == "proc" and cur:
            cur[2] = int(p[1])
        elif cur and len(p) > 1 and p[1].isdigit():
            cur[1][p[0]] = int(p[1])
    return snaps


def main():
    for out in sys.argv[1:]:
        pids = dict(l.split() for l in open(os.path.join(out, "pids.txt")))
        snaps = load_jmx(out)
        for f in sorted(glob.glob(os.path.join(out, "latency-samples", "*.csv"))):
            ts = [int(r[2]) for r in list(csv.reader(open(f)))[1:]]
            t0, t1 = min(ts), max(ts)
            print(os.path.basename(f))
            for pid, ss in snaps.items():
                a = [s for s in ss if s[0] >= t0]
                b = [s for s in ss if s[0] <= t1]
                if not a or not b or b[-1][0] <= a[0][0]:
                    continue
                a, b = a[0], b[-1]
                dt = (b[0] - a[0]) / 1000
                rates = {k: (v - a[1].get(k, 0)) / dt for k, v in b[1].items()}
                rates = {k: v for k, v in rates.items() if v >= 1 and k not in ("FetchConsumer", "FetchFollower", "BrokerHeartbeat")}
                print("  %s: %.2f CPUs, %.0f requests/s: %s" % (
                    pids.get(pid, pid).rsplit("-", 1)[-1], (b[2] - a[2]) / 100 / dt, sum(rates.values()),
                    ", ".join("%s %.0f" % kv for kv in sorted(rates.items(), key=lambda kv: -kv[1]))))


if __name__ == "__main__":
    main()
