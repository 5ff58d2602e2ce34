# reo — see README.md. Every target works on a fresh machine with Go,
# Java 17+ and Maven; `make test` fetches the Kafka jars itself.

GO        ?= go
KAFKA_VERSION := $(shell sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' kafka/pom.xml)
KAFKA_LIBS    := .cache/kafka-$(KAFKA_VERSION)/libs
TEST_TIMEOUT  ?= 25m

.PHONY: all build test test-shrink test-short lint kafka kafka-mm2 images demo chaos bench bench-quick bench-geo bench-cost clean

all: build

## kafka: fetch the Apache Kafka jars (broker, tools, log4j2) from Maven Central
kafka: $(KAFKA_LIBS)/kafka_2.13-$(KAFKA_VERSION).jar

$(KAFKA_LIBS)/kafka_2.13-$(KAFKA_VERSION).jar: kafka/pom.xml
	mvn -q -B -f kafka/pom.xml dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/$(KAFKA_LIBS)
	@test -f $@ || { echo "maven did not produce $@"; exit 1; }
	@touch $@

## images: build the container images offline (needs a Docker engine; root for the base):
## reo/base:bookworm (debootstrap + docker import: Debian 12 with OpenJDK 17),
## reo/kafka:<version> (the jars of `make kafka`, apache/kafka's entrypoint
## contract) and reo:local (the Dockerfile's "prebuilt" target). The
## testcontainers provider runs reo/kafka:<version> (cluster/containers.go).
BASE_IMAGE  := reo/base:bookworm
KAFKA_IMAGE := reo/kafka:$(KAFKA_VERSION)
REO_IMAGE   := reo:local
images: kafka
	BASE_IMAGE=$(BASE_IMAGE) KAFKA_IMAGE=$(KAFKA_IMAGE) REO_IMAGE=$(REO_IMAGE) KAFKA_VERSION=$(KAFKA_VERSION) \
	  KAFKA_LIBS=$(KAFKA_LIBS) GO=$(GO) bash deploy/images/build.sh

MM2_VERSION := $(shell sed -n 's:.*<mm2.version>\(.*\)</mm2.version>.*:\1:p' kafka/mm2/pom.xml)
MM2_LIBS    := .cache/mm2-$(MM2_VERSION)/libs

## kafka-mm2: fetch MirrorMaker 2 jars for reo-bench
kafka-mm2: $(MM2_LIBS)/connect-mirror-$(MM2_VERSION).jar

$(MM2_LIBS)/connect-mirror-$(MM2_VERSION).jar: kafka/mm2/pom.xml
	mvn -q -B -f kafka/mm2/pom.xml dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/$(MM2_LIBS)
	@test -f $@ || { echo "maven did not produce $@"; exit 1; }
	@touch $@

## build: compile every package and the binaries into bin/
build:
	$(GO) build ./...
	$(GO) build -o bin/ ./cmd/...

## test: the full default suite, real Kafka (local JVM brokers, and Kafka
## containers when a Docker engine has the images of `make images`) included.
## ./scenarios comes first: it is the longest package, and go test starts
## packages in the order given, two at a time on 2 cores.
test: kafka
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./scenarios/ ./...

## test-shrink: the planted three-step bug found and shrunk by rapid on
## in-process clusters (about 12 minutes; -short and make test skip it)
test-shrink:
	REO_KAFKA=inprocess REO_SEED=7 $(GO) test -count=1 -timeout 40m -run 'TestShrinkFindsPlantedBug' -v ./scenarios/

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

## BENCH_GUEST_MEMORY: on a VM that hands freed memory back to its host (Linux free page reporting), keep stops
## that for the plan (root; put back at the end) and touches the memory first: on this project's VM a GiB touched
## anew cost 5-14 s of system time in whichever process touched it (reports/bench-guestmem). report only says so.
BENCH_GUEST_MEMORY ?= keep

## BENCH_DATA: where the brokers of bench-quick, bench and bench-geo keep their files: tmpfs, as bench-cost; on
## this project's VM the ext4 disk slowed the destination's transaction markers (reports/bench-cost/README.md), and
## reo's one quick run there was 0.77x the pipe where on tmpfs it was 1.03x. BENCH_DATA= keeps them in the temp dir.
BENCH_DATA ?= /dev/shm

## bench-quick: reo vs pipe vs MM2 vs MM2-eos, 1 KiB / 12 partitions (< 5 min on 2 cores)
bench-quick: kafka kafka-mm2
	$(GO) run ./cmd/reo-bench --quick --guest-memory $(BENCH_GUEST_MEMORY) $(if $(BENCH_DATA),--broker-data $(BENCH_DATA)) --out reports/bench-quick

## bench: full plan (sizes, partitions, instances, reo commit interval / linger / in-flight), 3 interleaved runs each,
## with pipe-flush (the pipe marking a poll at once; the goals take the better of it and the pipe) and pipe-txn (the
## pipe with a transaction per poll) next to the four systems; broker data on tmpfs (BENCH_DATA);
## 1 GB per saturation run (3,000,000 records of 100 B).
## The committed report (1 h 17 min) skips pipe-txn and the reo-setting experiments and runs 10 s latency runs:
## --reo-commit-intervals "" --reo-commit-lingers "" --reo-max-inflight "" --reo-shards "" --latency-duration 10s --warmup 2s
bench: kafka kafka-mm2
	$(GO) run ./cmd/reo-bench --systems pipe,pipe-flush,pipe-txn,reo,mm2,mm2-eos --bytes 1000000000 --max-records 3000000 --guest-memory $(BENCH_GUEST_MEMORY) $(if $(BENCH_DATA),--broker-data $(BENCH_DATA)) --out reports/bench-full

## bench-geo: reo vs pipe vs MM2 vs MM2-eos across 40 and 100 ms links to the source and to the destination
bench-geo: kafka kafka-mm2
	$(GO) run ./cmd/reo-bench --geo --guest-memory $(BENCH_GUEST_MEMORY) $(if $(BENCH_DATA),--broker-data $(BENCH_DATA)) --out reports/bench-geo

## bench-cost: reo and MM2 at 12 to 5,000 partitions and 1,000 topics (throughput, start-up, commit time, memory);
## server-JVM brokers and 15-minute phases: the test JVM took over 5 minutes to create and fill 5,000 partitions;
## broker data on tmpfs (BENCH_COST_DATA): on the VM's ext4 disk, a transaction's markers into 1,250 partitions
## took 4.6 s instead of 0.15 s (reports/bench-cost/README.md); BENCH_COST_DATA= keeps them in the temp dir
BENCH_COST_DATA ?= /dev/shm
bench-cost: kafka kafka-mm2
	$(GO) run ./cmd/reo-bench --cost-curve --guest-memory $(BENCH_GUEST_MEMORY) --broker-jvm server --phase-timeout 15m $(if $(BENCH_COST_DATA),--broker-data $(BENCH_COST_DATA)) --out reports/bench-cost

clean:
	rm -rf bin
