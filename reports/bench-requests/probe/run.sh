#!/bin/bash
# run.sh OUT INSTANCES SYSTEM [reo-bench flags...]: one reo-bench saturation
# run of SYSTEM on 1 KiB records over 12 partitions, 3,000,000 records,
# while Probe.java samples both brokers' request metrics; writes
# OUT/progress.log, OUT/pids.txt (pid and cluster) and OUT/jmx.log.
# Run from the repository root, with reo-bench built to $REO_BENCH
# (default /tmp/reo-bench).
set -u
out=$1 inst=$2 sys=$3
shift 3
bench=${REO_BENCH:-/tmp/reo-bench}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
"$bench" --systems "$sys" --partitions 12 --sizes 1024 --instances "$inst" --repeats 1 \
	--bytes 3100000000 --max-records 3000000 --latency-duration 1s --latency-rate 1000 \
	--reo-commit-intervals "" --reo-commit-lingers "" --reo-max-inflight "" --reo-shards "" \
	--broker-data /dev/shm --out "$out" "$@" >"$out/progress.log" 2>&1 &
bench_pid=$!
pids=""
for _ in $(seq 1 120); do
	pids=$(pgrep -f 'kafka\.Kafka' | tr '\n' ' ')
	[ "$(echo $pids | wc -w)" -ge 2 ] && break
	sleep 1
done
sleep 8 # the brokers register their request metrics as they start
for p in $pids; do
	echo "$p $(tr '\0' ' ' </proc/$p/cmdline | grep -o 'reo-kafka-bench-[a-z]*' | head -1)"
done >"$out/pids.txt"
java "$here/Probe.java" 400 $pids >"$out/jmx.log" 2>&1 &
probe_pid=$!
wait $bench_pid
kill $probe_pid 2>/dev/null
wait $probe_pid 2>/dev/null
tail -n 1 "$out/progress.log"
