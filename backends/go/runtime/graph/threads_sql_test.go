package graph

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// The database stores' own behaviour, on each kind the project holds: the
// schema, the cleanup, and runs that never report back.

// A database is a kind of store a database keeps, as its test file
// registers it.
type database struct {
	// setup readies the test's database and names it in SVC_TEST_CHECKPOINT.
	setup func(t *testing.T)
	// open is the kind's Open (openSQLite, openPostgres); driver its
	// database/sql driver.
	open   func(ctx context.Context, graph, env string, opts ThreadOptions) (Threads, error)
	driver string
}

var databases = map[string]database{}

// openStore is how a database package opens its store.
type openStore = func(ctx context.Context, graph, env string, opts ThreadOptions) (Threads, error)

// The database packages' Open: svc.dev/runtime/sqlite and .../postgres
// import this package, so these tests cannot; databases_test.go (package
// graph_test, in this test binary) hands them over as it starts.
var sqliteOpen, postgresOpen openStore

// UseDatabases is how databases_test.go hands sqlite.Open and
// postgres.Open to this package's tests.
func UseDatabases(sqlite, postgres openStore) { sqliteOpen, postgresOpen = sqlite, postgres }

func openSQLite(ctx context.Context, graph, env string, opts ThreadOptions) (Threads, error) {
	return sqliteOpen(ctx, graph, env, opts)
}

func openPostgres(ctx context.Context, graph, env string, opts ThreadOptions) (Threads, error) {
	return postgresOpen(ctx, graph, env, opts)
}

// registerDatabase adds a database kind to the store contract's tests
// (storeKinds) and to this file's.
func registerDatabase(kind string, d database) {
	databases[kind] = d
	storeKinds[kind] = func(t *testing.T) opener {
		d.setup(t)
		return func(opts ThreadOptions) Threads {
			t.Helper()
			if opts.CleanupEvery == 0 {
				opts.CleanupEvery = -1
			}
			s, err := d.open(bg, "test_graph", "SVC_TEST_CHECKPOINT", opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		}
	}
}

// eachDatabase runs test on every kind of store that a database keeps.
func eachDatabase(t *testing.T, test func(t *testing.T, open opener)) {
	for _, kind := range sortedKeys(databases) {
		t.Run(kind, func(t *testing.T) { test(t, storeKinds[kind](t)) })
	}
}

// rawDB opens the store's database beside it, as an operator would.
func rawDB(t *testing.T, kind string) *sql.DB {
	t.Helper()
	db, err := sql.Open(databases[kind].driver, os.Getenv("SVC_TEST_CHECKPOINT"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func kindOf(s Threads) string { return s.(*sqlThreads).kind }

// reopen opens another store of kind on the test's database, for graph.
func reopen(kind, graph string) (Threads, error) {
	return databases[kind].open(bg, graph, "SVC_TEST_CHECKPOINT", ThreadOptions{CleanupEvery: -1})
}

func TestTheTablesAreMadeOnFirstStartAndVersioned(t *testing.T) {
	eachDatabase(t, func(t *testing.T, open opener) {
		s := open(ThreadOptions{})
		db := rawDB(t, kindOf(s))
		var version int
		if err := db.QueryRow(`SELECT version FROM svc_schema WHERE component = 'threads'`).Scan(&version); err != nil || version != 2 {
			t.Fatalf("schema version %d: %v", version, err)
		}
		open(ThreadOptions{}) // a second start changes nothing
		if _, err := db.Exec(`UPDATE svc_schema SET version = 3 WHERE component = 'threads'`); err != nil {
			t.Fatal(err)
		}
		if _, err := reopen(kindOf(s), "test_graph"); err == nil || !strings.Contains(err.Error(), "schema version 3") ||
			!strings.HasPrefix(err.Error(), "SVC_TEST_CHECKPOINT: ") {
			t.Fatalf("a database of a newer service: %v", err)
		}
	})
}

// A database at version 1 (before the usage column) is migrated as the
// service starts: a thread paused there is resumed with no usage kept.
func TestADatabaseAtVersion1IsMigrated(t *testing.T) {
	eachDatabase(t, func(t *testing.T, open opener) {
		s := open(ThreadOptions{})
		pauseNew(t, s, "t1")
		db := rawDB(t, kindOf(s))
		for _, stmt := range []string{`ALTER TABLE svc_threads DROP COLUMN usage`,
			`UPDATE svc_schema SET version = 1 WHERE component = 'threads'`} {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatal(err)
			}
		}
		migrated := open(ThreadOptions{})
		var version int
		if err := db.QueryRow(`SELECT version FROM svc_schema WHERE component = 'threads'`).Scan(&version); err != nil || version != 2 {
			t.Fatalf("schema version %d: %v", version, err)
		}
		p := must(migrated.Paused(bg, "t1"))(t)
		if p.Usage != (Usage{}) || p.Node != "review" {
			t.Fatalf("the thread paused at version 1: %+v", p)
		}
		used := Usage{InputTokens: 1, ModelCalls: 1, Attempts: 1}
		g := must(migrated.Claim(bg, "t1", p.ID))(t)
		k := must(keep(&Interrupt{Node: "review", Field: "answer", Value: question}, State{}, used))(t)
		if err := migrated.Pause(bg, "t1", g, k); err != nil {
			t.Fatal(err)
		}
		if p := must(migrated.Paused(bg, "t1"))(t); p.Usage != used {
			t.Fatalf("usage kept after the migration: %+v", p.Usage)
		}
	})
}

// Two graphs on one database keep their threads apart.
func TestGraphsSharingADatabaseKeepTheirThreadsApart(t *testing.T) {
	eachDatabase(t, func(t *testing.T, open opener) {
		s := open(ThreadOptions{})
		pauseNew(t, s, "t1")
		other, err := reopen(kindOf(s), "another")
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if _, err := other.Paused(bg, "t1"); code(err) != "thread_not_found" {
			t.Fatalf("another graph's thread: %v", err)
		}
	})
}

func TestTheCleanupDeletesExpiredThreads(t *testing.T) {
	eachDatabase(t, func(t *testing.T, open opener) {
		c := newClock()
		s := open(ThreadOptions{Now: c.Now})
		pauseNew(t, s, "old")
		c.add(ThreadTTL - time.Second)
		pauseNew(t, s, "young")
		c.add(2 * time.Second)
		n, err := s.(*sqlThreads).cleanup(bg)
		if err != nil || n != 1 {
			t.Fatalf("cleanup: %d %v", n, err)
		}
		var left int
		if err := rawDB(t, kindOf(s)).QueryRow(`SELECT count(*) FROM svc_threads`).Scan(&left); err != nil || left != 1 {
			t.Fatalf("%d threads left: %v", left, err)
		}
		if _, err := s.Paused(bg, "young"); err != nil {
			t.Fatal(err)
		}
	})
}

// A run whose process died (or whose database went away before it ended)
// is settled once RunFor has passed: a resumed run's thread is paused
// again at its interrupt, a new run's thread failed.
func TestARunThatNeverReportsBackIsSettled(t *testing.T) {
	eachDatabase(t, func(t *testing.T, open opener) {
		c := newClock()
		s := open(ThreadOptions{Now: c.Now, RunFor: time.Minute})
		id := pauseNew(t, s, "t1")
		lost := must(s.Claim(bg, "t1", id))(t)
		if _, err := s.Start(bg, "t1"); code(err) != "thread_busy" {
			t.Fatalf("a run under way: %v", err)
		}
		c.add(time.Minute + time.Second)
		if p := must(s.Paused(bg, "t1"))(t); p.ID != id || fmt.Sprint(p.Value) != fmt.Sprint(question) {
			t.Fatalf("not paused again at its interrupt: %+v", p)
		}
		if err := s.Finish(bg, "t1", lost); err != nil { // too late: no longer its thread
			t.Fatal(err)
		}
		won := must(s.Claim(bg, "t1", id))(t)
		if err := s.Finish(bg, "t1", won); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Paused(bg, "t1"); code(err) != "not_interrupted" || !strings.Contains(err.Error(), "finished") {
			t.Fatalf("the winner's end: %v", err)
		}

		must(s.Start(bg, "t2"))(t) // a new run that never ends fails
		c.add(time.Minute + time.Second)
		if _, err := s.Paused(bg, "t2"); code(err) != "not_interrupted" || !strings.Contains(err.Error(), "failed") {
			t.Fatalf("a lost new run: %v", err)
		}
		must(s.Start(bg, "t2"))(t) // and the thread runs again
	})
}
