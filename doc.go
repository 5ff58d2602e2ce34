// Package reo is the root of the reo module: an exactly-once Kafka
// replicator (cmd/reo, replicator/) and the harness that proves it
// (cluster/, chaos/, scenarios/, oracle/, reports/). See README.md.
package reo
