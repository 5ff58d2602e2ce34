#!/bin/bash
# kafka-run-class.sh CLASS [ARGS...]: run a Kafka main class with the
# jars in /opt/kafka/libs and the usual KAFKA_* JVM settings (the release
# tarball's script, reduced to what this image needs).
set -euo pipefail
base=/opt/kafka
if [ $# -lt 1 ]; then
  echo "usage: $0 CLASS [ARGS...]" >&2
  exit 1
fi
: "${KAFKA_HEAP_OPTS:=-Xmx256M}"
: "${KAFKA_JVM_PERFORMANCE_OPTS:=-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true}"
: "${KAFKA_LOG4J_OPTS:=-Dlog4j2.configurationFile=$base/config/tools-log4j2.yaml}"
if [ ! -f "$base/config/tools-log4j2.yaml" ] && [ -f /etc/kafka/docker/tools-log4j2.yaml ]; then
  KAFKA_LOG4J_OPTS="-Dlog4j2.configurationFile=/etc/kafka/docker/tools-log4j2.yaml"
fi
# shellcheck disable=SC2086 # the *_OPTS variables are word lists
exec java $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS ${KAFKA_GC_LOG_OPTS-} ${KAFKA_JMX_OPTS-} $KAFKA_LOG4J_OPTS \
  -cp "$base/libs/*" ${KAFKA_OPTS-} "$@"
