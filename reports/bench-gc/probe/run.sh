#!/bin/bash
# run.sh OUT [reo-bench flags...]: one reo-bench run with --latency-samples,
# while ../../bench-requests/probe/Probe.java reads both brokers' request
# metrics every second (OUT/jmx.log, through beside.sh); OUT/pids.txt names
# the brokers. Run from the repository root, with reo-bench built to
# $REO_BENCH (default /tmp/reo-bench).
set -u
out=$1
shift
bench=${REO_BENCH:-/tmp/reo-bench}
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../bench-requests/probe/beside.sh" "$out" 1000 "$bench" --latency-samples --out "$out" "$@"
