# reo — see README.md. Every target works on a fresh machine with Go,
# Java 17+ and Maven; `make test` fetches the Kafka jars itself.

GO        ?= go
KAFKA_VERSION := $(shell sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' kafka/pom.xml)
KAFKA_LIBS    := .cache/kafka-$(KAFKA_VERSION)/libs
TEST_TIMEOUT  ?= 25m

.PHONY: all build test test-short lint kafka demo chaos clean

all: build

## kafka: fetch the Apache Kafka jars (broker, tools, log4j2) from Maven Central
kafka: $(KAFKA_LIBS)/kafka_2.13-$(KAFKA_VERSION).jar

$(KAFKA_LIBS)/kafka_2.13-$(KAFKA_VERSION).jar: kafka/pom.xml
	mvn -q -B -f kafka/pom.xml dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/$(KAFKA_LIBS)
	@test -f $@ || { echo "maven did not produce $@"; exit 1; }
	@touch $@

## build: compile every package and the binaries into bin/
build:
	$(GO) build ./...
	$(GO) build -o bin/ ./cmd/...

## test: the full default suite, real Kafka (local JVM brokers) included
test: kafka
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

## test-short: in-process clusters only (no JVM)
test-short:
	REO_KAFKA=inprocess $(GO) test -count=1 -short -timeout $(TEST_TIMEOUT) ./...

## lint: go vet and gofmt
lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## demo: two in-process Kafka clusters, a mixed workload, reo replicating it live, then a partition-by-partition read_committed comparison (DEMO_FLAGS="-duration 60s -partitions 8 -seed 1")
demo:
	$(GO) run ./cmd/reo-demo $(DEMO_FLAGS)

## chaos: draw and run scenarios for DURATION (default 10m) with a progress line
DURATION ?= 10m
chaos: kafka
	$(GO) run ./cmd/reo-chaos -duration $(DURATION)

clean:
	rm -rf bin
