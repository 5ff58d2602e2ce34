#!/usr/bin/env python3
"""window.py DIR...: per GB copied, each broker's requests by type and CPU
over the copy's steady middle, from run.sh's output.

The window is the snapshots in which the destination's produced bytes,
counted from the end of the source's preload, are between 10 % and 90 %
of the copy. reo-bench's produce ceiling writes to the destination before
the preload and its latency run after the copy, so neither is in it."""
import re
import sys


def snapshots(d):
    side = {}
    for line in open(d + "/pids.txt"):
        pid, name = line.split()
        side[pid] = "dst" if "destination" in name else "src"
    out, cur = [], None
    for line in open(d + "/jmx.log"):
        m = re.match(r"time (\d+) pid (\d+)$", line.strip())
        if m:
            s = side[m.group(2)]
            if not out or s in out[-1]:
                out.append({"t": int(m.group(1))})
            cur = out[-1].setdefault(s, {})
            continue
        f = line.split()
        if cur is None or len(f) < 2 or not f[0].isalpha() or not f[1].isdigit() or not all("=" in kv for kv in f[2:]):
            continue  # the probe's exception when a broker stops
        v = {"n": float(f[1])}
        for kv in f[2:]:
            k, _, x = kv.partition("=")
            v[k] = float(x)
        cur[f[0]] = v
    return [s for s in out if "src" in s and "dst" in s]


def produced(s, side):
    return s[side].get("Produce", {}).get("bytes", 0)


def window(d):
    ss = snapshots(d)
    preloaded = produced(ss[-1], "src")
    base = produced(next(s for s in ss if produced(s, "src") >= 0.99 * preloaded), "dst")
    copy = produced(ss[-1], "dst") - base
    a = next(s for s in ss if produced(s, "dst") >= base + 0.1 * copy)
    b = [s for s in ss if produced(s, "dst") <= base + 0.9 * copy][-1]
    gb = (produced(b, "dst") - produced(a, "dst")) / 1e9
    per = {}
    for side in ("src", "dst"):
        for q in set(a[side]) | set(b[side]):
            x, y = a[side].get(q, {}), b[side].get(q, {})
            per[(side, q)] = {k: (y.get(k, 0) - x.get(k, 0)) / gb for k in ("n", "local")}
    return per, gb, (b["t"] - a["t"]) / 1000


runs = {d.rstrip("/").split("/")[-1]: window(d) for d in sys.argv[1:]}
print("| | " + " | ".join(f"{n} ({gb:.2f} GB, {t:.0f} s)" for n, (_, gb, t) in runs.items()) + " |")
print("|---|" + "---:|" * len(runs))
keys = sorted(set().union(*(p.keys() for p, _, _ in runs.values())), key=lambda k: (k[0] != "src", k[1]))
for k in keys:
    cells = [p.get(k, {"n": 0, "local": 0}) for p, _, _ in runs.values()]
    if k[1] == "proc":
        print(f"| {k[0]} CPU s/GB | " + " | ".join(f"{c['n'] / 100:.2f}" for c in cells) + " |")
    elif k[1] not in ("FetchConsumer", "FetchFollower") and any(c["n"] >= 1 for c in cells):
        print(f"| {k[0]} {k[1]} | " + " | ".join(f"{c['n']:.0f} ({c['local'] / 1000:.2f} s)" for c in cells) + " |")
