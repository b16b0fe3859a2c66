// Package sqlite is the "sqlite" checkpointer of svc.dev/runtime: the
// graph's paused threads in a SQLite database file (pure Go, no cgo, so
// a project's static build stands). A project whose graph has
// settings.checkpointer {"type": "sqlite"} registers Open
// (graph.RegisterThreads); other projects neither download nor link it.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"

	svc "svc.dev/runtime/graph"

	_ "modernc.org/sqlite"
)

// Open opens the store of a "sqlite" checkpointer: the database file
// whose path the variable env names (settings.checkpointer.pathEnv),
// created with its tables when missing. graph names the graph's threads
// in it. An unset variable or a file that cannot be opened stops the
// service with a message naming the variable.
func Open(ctx context.Context, graph, env string, opts svc.ThreadOptions) (svc.Threads, error) {
	path := os.Getenv(env)
	if path == "" {
		return nil, fmt.Errorf("%s is not set: set it to the path of the SQLite database file that keeps "+
			"the paused threads (settings.checkpointer.pathEnv names this variable)", env)
	}
	// A URI, so no character of the path is taken for a parameter. Every
	// connection waits up to StoreTimeout for another's write (SQLite
	// writes one at a time, across processes); WAL lets reads go on
	// meanwhile; a transaction (the schema's) takes the write lock at
	// BEGIN, so two processes starting together queue instead of failing.
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_txlock=immediate", svc.StoreTimeout.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	return svc.OpenSQL(ctx, svc.SQLStore{DB: db, Kind: "sqlite", Graph: graph, Env: env,
		Unreachable: func(reason string) error {
			return fmt.Errorf("%s: the SQLite database %q cannot be opened (%s): "+
				"point it at a file in a directory the service can write", env, path, reason)
		}}, opts)
}
