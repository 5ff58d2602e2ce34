#!/bin/bash
# run.sh OUT [reo-bench flags...]: one reo-bench run with --latency-samples,
# while ../../bench-requests/probe/Probe.java reads both brokers' request
# metrics every second (OUT/jmx.log); OUT/pids.txt names the brokers. Run
# from the repository root, with reo-bench built to $REO_BENCH (default
# /tmp/reo-bench).
set -u
out=$1
shift
bench=${REO_BENCH:-/tmp/reo-bench}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
"$bench" --latency-samples --out "$out" "$@" >"$out/progress.log" 2>&1 &
bench_pid=$!
pids=""
for _ in $(seq 1 120); do
	pids=$(pgrep -f 'kafka\.Kafka' | tr '\n' ' ')
	[ "$(echo $pids | wc -w)" -ge 2 ] && break
	sleep 1
done
sleep 5 # the brokers register their request metrics as they start
for p in $pids; do
	echo "$p $(tr '\0' ' ' </proc/$p/cmdline | grep -o 'reo-kafka-bench-[a-z]*' | head -1)"
done >"$out/pids.txt"
java "$here/../../bench-requests/probe/Probe.java" 1000 $pids >"$out/jmx.log" 2>&1 &
probe_pid=$!
wait $bench_pid
kill $probe_pid 2>/dev/null
wait $probe_pid 2>/dev/null
tail -n 3 "$out/progress.log"
