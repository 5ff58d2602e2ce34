#!/usr/bin/env python3
"""profile.py DIR...: for each jfr.sh output DIR, each broker's CPU over the
copy by thread kind, and where its sampled Java threads were, per GB copied.

The copy is from the start snapshot of the threads (reo-bench's "at
saturation" step) to the end one (its oracle step), so it includes the
system's start-up and the run's tail. CPU is from /proc (clock ticks of
each thread, every thread of the JVM: GC and compilers too); the thread
names are the JVM's (jstack's nid). The stacks are JFR's execution
samples of Java threads in that window: JFR takes at most five Java
threads per period, so they say where the Java threads were, in shares,
not how much CPU each cost."""
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict

GB = 3_000_000 * 1024 / 1e9  # the copy: 3,000,000 records of 1 KiB values
TICK = os.sysconf("SC_CLK_TCK")


def kind(name):
    rules = [
        (r"request-handler", "request handlers"),
        (r"network-thread", "network threads"),
        (r"kafka-socket-acceptor|acceptor", "acceptor"),
        (r"^GC Thread|^VM Thread|^G1 |^GC ", "GC and VM thread"),
        (r"CompilerThread|^C1 |^C2 |Sweeper", "JIT compilers"),
        (r"TxnMarkerSenderThread|AddPartitionsToTxnSenderThread", "transaction senders"),
        (r"^JFR ", "JFR (the recording)"),
        (r"kafka-scheduler|ExpirationReaper|executor-|transaction-log", "schedulers and reapers"),
        (r"raft|metadata|quorum|controller|broker-\d+-to-controller|kafka-\d+-", "KRaft and metadata"),
        (r"log-cleaner|LogDirFailure|logdir", "log housekeeping"),
    ]
    for pat, k in rules:
        if re.search(pat, name, re.I):
            return k
    return "other"


def read_threads(path):
    out = {}
    for line in open(path):
        f = line.split(None, 3)
        if len(f) >= 3:
            out[int(f[0])] = (int(f[1]) + int(f[2]), f[3].strip() if len(f) > 3 else "")
    return out


def java_names(path):
    names = {}
    for line in open(path):
        m = re.match(r'"(.*)" .*nid=0x([0-9a-f]+)', line)
        if m:
            names[int(m.group(2), 16)] = m.group(1)
    return names


def cpu_by_thread(d, side):
    a = read_threads(f"{d}/{side}-threads-start.txt")
    b = read_threads(f"{d}/{side}-threads-end.txt")
    names = java_names(f"{d}/{side}-jstack.txt")
    by = Counter()
    for tid, (ticks, comm) in b.items():
        delta = ticks - a.get(tid, (0, ""))[0]
        by[names.get(tid, comm)] += delta / TICK
    return by


def cpu_by_kind(d, side):
    by = Counter()
    for name, sec in cpu_by_thread(d, side).items():
        by[kind(name)] += sec
    return by


HANDLE = re.compile(r"KafkaApis\.handle(\w+)")


def samples(d, side, t0, t1):
    out = subprocess.run(["jfr", "print", "--json", "--stack-depth", "64", "--events", "jdk.ExecutionSample", f"{d}/{side}.jfr"],
                         capture_output=True, text=True, check=True).stdout
    evs = json.loads(out)["recording"]["events"]
    from datetime import datetime
    res = []
    for e in evs:
        v = e["values"]
        t = datetime.fromisoformat(v["startTime"].replace("Z", "+00:00")[:26] + "+00:00").timestamp()
        if not (t0 <= t <= t1):
            continue
        frames = [f'{fr["method"]["type"]["name"].split("/")[-1]}.{fr["method"]["name"]}' for fr in v["stackTrace"]["frames"]]
        res.append((v["sampledThread"]["javaName"] or "", frames))
    return res


def main():
    for d in sys.argv[1:]:
        t0 = os.path.getmtime(f"{d}/destination-threads-start.txt")
        t1 = os.path.getmtime(f"{d}/destination-threads-end.txt")
        print(f"== {d}: copy window {t1 - t0:.1f} s, {GB:.2f} GB")
        for side in ("source", "destination"):
            by = cpu_by_kind(d, side)
            total = sum(by.values())
            print(f"  {side}: {total / GB:.2f} CPU s/GB")
            for k, v in by.most_common():
                if v / GB >= 0.005:
                    print(f"    {k:26s} {v / GB:6.2f}")
            print("    threads over 0.05 CPU s in the window (seconds):")
            for name, sec in cpu_by_thread(d, side).most_common():
                if sec >= 0.05:
                    print(f"      {sec:6.2f} {name}")
            ss = samples(d, side, t0, t1)
            if not ss:
                continue
            handler = Counter()
            leaf = Counter()
            for name, fr in ss:
                if kind(name) == "request handlers":
                    h = next((m.group(1) for f in fr for m in [HANDLE.search(f)] if m), None)
                    if h is None and any("handleProduceAppend" in f for f in fr):
                        # A transactional produce appended once the
                        # coordinator has verified the partition is in
                        # the transaction (KIP-890): a callback, not
                        # under handleProduceRequest.
                        h = "ProduceRequest, verified"
                    h = h or "(not in KafkaApis)"
                    handler[h] += 1
                leaf[(kind(name), fr[0] if fr else "?")] += 1
            print(f"    {len(ss)} Java samples; request handlers by request ({sum(handler.values())}):")
            for h, n in handler.most_common(8):
                print(f"      {h:30s} {n:5d} ({100 * n / max(1, sum(handler.values())):.0f} %)")
            print("    top leaf frames:")
            for (k, f), n in leaf.most_common(12):
                print(f"      {n:5d} {k:22s} {f}")


if __name__ == "__main__":
    main()
