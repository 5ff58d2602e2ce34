#!/bin/bash
# jfr.sh OUT INSTANCES SYSTEM [reo-bench flags...]: one reo-bench
# saturation run of SYSTEM on 1 KiB records over 12 partitions (3,000,000
# records, 3.1 GB, like ../../bench-requests/probe/run.sh) while Java
# Flight Recorder records both brokers from their start to the end of the
# copy (Kafka's JDK's profile settings with Java stacks sampled every
# millisecond, at most five threads a time), and the brokers' threads' CPU
# is read from /proc when the copy starts and when it ends. Writes
# OUT/progress.log (reo-bench's steps), OUT/pids.txt (pid and cluster),
# OUT/<cluster>.jfr, OUT/<cluster>-threads-{start,end}.txt (per thread:
# tid, utime and stime in clock ticks, name) and
# OUT/<cluster>-jstack.txt (a thread dump, for the full names). Run from the
# repository root, with reo-bench built to $REO_BENCH (default
# /tmp/reo-bench); profile.py reads the result.
set -u
out=$1 inst=$2 sys=$3
shift 3
bench=${REO_BENCH:-/tmp/reo-bench}
mkdir -p "$out"
out=$(cd "$out" && pwd)
jdk=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
sed 's|<setting name="period" control="method-sampling-java-interval">10 ms</setting>|<setting name="period" control="method-sampling-java-interval">1 ms</setting>|' \
	"$jdk/lib/jfr/profile.jfc" >"$out/settings.jfc"
grep -q '>1 ms<' "$out/settings.jfc" || { echo "jfr.sh: cannot set the sampling period in $jdk/lib/jfr/profile.jfc" >&2; exit 1; }
# threads PID FILE: every thread's tid, utime, stime (clock ticks) and name.
threads() {
	local t st rest f
	for t in /proc/$1/task/*; do
		st=$(cat "$t/stat" 2>/dev/null) || continue
		rest=${st##*) } # the fields after the name, from the state on
		read -r -a f <<<"$rest"
		echo "${t##*/} ${f[11]} ${f[12]} $(cat "$t/comm")"
	done >"$2"
}
"$bench" --systems "$sys" --partitions 12 --sizes 1024 --instances "$inst" --repeats 1 \
	--bytes 3100000000 --max-records 3000000 --latency-duration 1s --latency-rate 1000 \
	--reo-commit-intervals "" --reo-commit-lingers "" --reo-max-inflight "" --reo-shards "" \
	--broker-data /dev/shm --out "$out/bench" "$@" >"$out/progress.log" 2>&1 &
bench_pid=$!
pids=$("$(cd "$(dirname "$0")" && pwd)/../../bench-requests/probe/brokers.sh")
: >"$out/pids.txt"
for p in $pids; do
	n=$(tr '\0' ' ' </proc/$p/cmdline | grep -o 'reo-kafka-bench-[a-z]*' | head -1)
	echo "$p $n" >>"$out/pids.txt"
	jcmd "$p" JFR.start name=bench settings="$out/settings.jfc" >/dev/null
done
name() { awk -v p="$1" '$1==p {sub("reo-kafka-bench-", "", $2); print $2}' "$out/pids.txt"; }
started=""
while kill -0 $bench_pid 2>/dev/null; do
	if [ -z "$started" ] && grep -q "at saturation" "$out/progress.log"; then
		for p in $pids; do threads "$p" "$out/$(name $p)-threads-start.txt"; done
		started=1
	fi
	if grep -q "oracle over" "$out/progress.log"; then
		# The copy is over; the brokers stop before reo-bench prints its
		# report, so the recording is dumped while they live.
		for p in $pids; do
			threads "$p" "$out/$(name $p)-threads-end.txt"
			jcmd "$p" Thread.print >"$out/$(name $p)-jstack.txt"
			jcmd "$p" JFR.dump name=bench filename="$out/$(name $p).jfr" >/dev/null
		done
		break
	fi
	sleep 0.2
done
wait $bench_pid
tail -n 3 "$out/progress.log"
