#!/bin/bash
# run.sh OUT INSTANCES SYSTEM [reo-bench flags...]: one reo-bench saturation
# run of SYSTEM on 1 KiB records over 12 partitions, 3,000,000 records,
# while Probe.java samples both brokers' request metrics every 400 ms
# (beside.sh); writes OUT/progress.log, OUT/pids.txt (pid and cluster) and
# OUT/jmx.log. Run from the repository root, with reo-bench built to
# $REO_BENCH (default /tmp/reo-bench).
set -u
out=$1 inst=$2 sys=$3
shift 3
bench=${REO_BENCH:-/tmp/reo-bench}
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/beside.sh" "$out" 400 "$bench" --systems "$sys" --partitions 12 --sizes 1024 --instances "$inst" --repeats 1 \
	--bytes 3100000000 --max-records 3000000 --latency-duration 1s --latency-rate 1000 \
	--reo-commit-intervals "" --reo-commit-lingers "" --reo-max-inflight "" --reo-shards "" \
	--broker-data /dev/shm --out "$out" "$@"
