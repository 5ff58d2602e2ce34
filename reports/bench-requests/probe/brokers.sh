#!/bin/bash
# brokers.sh: waits, at most 120 s, until two Kafka broker JVMs run (a
# reo-bench run's source and destination), and prints their pids on one
# line (fewer if they did not come up). Used by beside.sh and
# ../../bench-share/probe/jfr.sh.
pids=""
for _ in $(seq 1 120); do
	pids=$(pgrep -f 'kafka\.Kafka' | tr '\n' ' ')
	[ "$(echo $pids | wc -w)" -ge 2 ] && break
	sleep 1
done
echo $pids
