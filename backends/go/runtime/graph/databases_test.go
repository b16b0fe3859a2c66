package graph_test

import (
	"svc.dev/runtime/graph"
	"svc.dev/runtime/postgres"
	"svc.dev/runtime/sqlite"
)

// The thread store's tests run on the database packages' stores; those
// import package graph, so they are handed over from this external test
// file, which the same test binary holds.
func init() { graph.UseDatabases(sqlite.Open, postgres.Open) }
