// Package replicator copies Kafka topics from a source cluster to a
// destination cluster exactly once, in one hop. See the package's doc.go
// sections below for the algorithm and the decisions behind it.
package replicator
