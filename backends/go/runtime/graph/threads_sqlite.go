package graph

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"

	// SQLite in pure Go: no cgo, so the Dockerfile's static build stands.
	_ "modernc.org/sqlite"
)

// OpenSQLite opens the store of a "sqlite" checkpointer: the database file
// whose path the variable env names (settings.checkpointer.pathEnv),
// created with its tables when missing. graph names the graph's threads
// in it. An unset variable or a file that cannot be opened stops the
// service with a message naming the variable.
func OpenSQLite(ctx context.Context, graph, env string, opts ThreadOptions) (Threads, error) {
	path := os.Getenv(env)
	if path == "" {
		return nil, fmt.Errorf("%s is not set: set it to the path of the SQLite database file that keeps "+
			"the paused threads (settings.checkpointer.pathEnv names this variable)", env)
	}
	// A URI, so no character of the path is taken for a parameter. Every
	// connection waits up to storeTimeout for another's write (SQLite
	// writes one at a time, across processes); WAL lets reads go on
	// meanwhile; a transaction (the schema's) takes the write lock at
	// BEGIN, so two processes starting together queue instead of failing.
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_txlock=immediate", storeTimeout.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	return openSQL(ctx, db, "sqlite", graph, env, "", opts, func(reason string) error {
		return fmt.Errorf("%s: the SQLite database %q cannot be opened (%s): "+
			"point it at a file in a directory the service can write", env, path, reason)
	})
}
