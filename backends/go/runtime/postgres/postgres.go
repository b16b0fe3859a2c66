// Package postgres is the "postgres" checkpointer of svc.dev/runtime: the
// graph's paused threads in a PostgreSQL database that every replica
// shares. A project whose graph has settings.checkpointer
// {"type": "postgres"} registers Open (graph.RegisterThreads); other
// projects neither download nor link pgx.
package postgres

import (
	"context"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	svc "svc.dev/runtime/graph"
)

// Open opens the store of a "postgres" checkpointer: the database whose
// connection URL the variable env names (settings.checkpointer.urlEnv),
// its tables created on first start. graph names the graph's threads in
// it. An unset variable or a database that cannot be reached stops the
// service with a message naming the variable (never the URL, which
// carries a password).
//
// Through pgx's database/sql driver, as SQLite: the steps are the same
// statements, and database/sql's pool opens a connection when one is
// needed, so a database that comes back is used at once (a connection
// broken meanwhile is checked before reuse and replaced).
func Open(ctx context.Context, graph, env string, opts svc.ThreadOptions) (svc.Threads, error) {
	url := os.Getenv(env)
	if url == "" {
		return nil, fmt.Errorf("%s is not set: set it to a PostgreSQL connection URL "+
			"(postgresql://user:password@host/db) that keeps the paused threads "+
			"(settings.checkpointer.urlEnv names this variable)", env)
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// pgx's message leaves the password out.
		return nil, fmt.Errorf("%s: not a PostgreSQL connection URL (%s)", env, svc.FirstLine(err))
	}
	return svc.OpenSQL(ctx, svc.SQLStore{DB: stdlib.OpenDB(*cfg), Kind: "postgres", Graph: graph, Env: env,
		// Replicas starting together make the tables one after the other.
		Lock: "SELECT pg_advisory_xact_lock(hashtext('svc_threads schema'))",
		Unreachable: func(reason string) error {
			return fmt.Errorf("%s: the PostgreSQL database cannot be reached (%s): "+
				"check the URL and that the server is up", env, reason)
		}}, opts)
}
