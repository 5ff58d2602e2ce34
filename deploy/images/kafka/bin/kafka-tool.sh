#!/bin/bash
# The release's command-line tools, by the name they are called with
# (kafka-topics.sh, kafka-console-consumer.sh, ...: symlinks to this file).
set -euo pipefail
base=/opt/kafka
name=$(basename "$0" .sh)
case "$name" in
  kafka-server-start)
    if [ $# -lt 1 ]; then
      echo "usage: $0 server.properties [--override property=value]*" >&2
      exit 1
    fi
    : "${KAFKA_HEAP_OPTS:=-Xmx1G -Xms1G}"
    : "${KAFKA_LOG4J_OPTS:=-Dlog4j2.configurationFile=$base/config/log4j2.yaml}"
    export KAFKA_HEAP_OPTS KAFKA_LOG4J_OPTS
    exec "$base/bin/kafka-run-class.sh" kafka.Kafka "$@" ;;
  kafka-storage) class=kafka.tools.StorageTool ;;
  kafka-topics) class=org.apache.kafka.tools.TopicCommand ;;
  kafka-console-producer) class=org.apache.kafka.tools.ConsoleProducer ;;
  kafka-console-consumer) class=org.apache.kafka.tools.consumer.ConsoleConsumer ;;
  kafka-broker-api-versions) class=org.apache.kafka.tools.BrokerApiVersionsCommand ;;
  kafka-metadata-quorum) class=org.apache.kafka.tools.MetadataQuorumCommand ;;
  kafka-consumer-groups) class=org.apache.kafka.tools.consumer.group.ConsumerGroupCommand ;;
  kafka-transactions) class=org.apache.kafka.tools.TransactionsCommand ;;
  kafka-configs) class=org.apache.kafka.tools.ConfigCommand ;;
  kafka-get-offsets) class=org.apache.kafka.tools.GetOffsetShell ;;
  *) echo "kafka-tool.sh: unknown tool $name" >&2; exit 1 ;;
esac
exec "$base/bin/kafka-run-class.sh" "$class" "$@"
