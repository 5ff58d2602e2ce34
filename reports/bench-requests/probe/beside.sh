#!/bin/bash
# beside.sh OUT INTERVAL_MS COMMAND...: runs COMMAND (a reo-bench run) with
# its output in OUT/progress.log, and Probe.java beside it once its two
# brokers are up, sampling every INTERVAL_MS into OUT/jmx.log; OUT/pids.txt
# names the brokers (pid and cluster). Ends with COMMAND.
set -u
out=$1 every=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
"$@" >"$out/progress.log" 2>&1 &
bench_pid=$!
pids=$("$here/brokers.sh")
sleep 8 # the brokers register their request metrics as they start
for p in $pids; do
	echo "$p $(tr '\0' ' ' </proc/$p/cmdline | grep -o 'reo-kafka-bench-[a-z]*' | head -1)"
done >"$out/pids.txt"
java "$here/Probe.java" "$every" $pids >"$out/jmx.log" 2>&1 &
probe_pid=$!
wait $bench_pid
kill $probe_pid 2>/dev/null
wait $probe_pid 2>/dev/null
tail -n 3 "$out/progress.log"
