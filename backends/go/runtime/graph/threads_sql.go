package graph

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// sqlThreads keeps the threads in a database that every process opening
// it shares (settings.checkpointer "sqlite" or "postgres"): a restart
// loses nothing and any replica resumes any thread. One table,
// svc_threads (docs/threads-schema.md in the svc repository); times are Unix milliseconds of the processes'
// clocks.
//
// Each step is one statement whose WHERE holds its check, so the
// database's own locking makes it atomic across processes: PostgreSQL
// locks the row an UPDATE changes and a second UPDATE of it re-checks its
// WHERE on the committed row; SQLite runs one writing statement at a time
// on the file. A claim is thus a compare-and-set on (status,
// interrupt_id): of concurrent claims one changes the row, the others
// change nothing and are 409.
//
// No cap on the number of threads: a thread unused for TTL is 404 at once
// and deleted by a cleanup at start and then every CleanupEvery. A run
// that never reports back (its process died, or the database went away
// before it ended) is settled once RunFor has passed: a resumed run's
// thread is paused again at the interrupt it claimed, a new run's failed.
type sqlThreads struct {
	db    *sql.DB
	kind  string
	graph string
	opts  ThreadOptions
	// stop ends the cleanup, which closes done (nil without a cleanup).
	stop, done chan struct{}
}

// Bounds of the database stores.
const (
	// StoreTimeout bounds each step: a database that does not answer in
	// time is 503 checkpointer_unavailable.
	StoreTimeout = 5 * time.Second
	// storeConns bounds each process's connections.
	storeConns = 10
)

// threadsSchema lists the versions of the schema, oldest first: a database
// at version n has had the statements of the first n applied. A change
// appends a version (docs/threads-schema.md, "Migrations"); a database at an older
// version gets the rest at start-up, in one transaction.
var threadsSchema = [][]string{
	{ // 1
		`CREATE TABLE svc_threads (
			graph        TEXT NOT NULL,
			id           TEXT NOT NULL,
			status       TEXT NOT NULL,
			generation   TEXT NOT NULL,
			deadline     BIGINT NOT NULL,
			touched      BIGINT NOT NULL,
			node         TEXT,
			field        TEXT,
			interrupt_id TEXT,
			payload      TEXT,
			state        TEXT,
			PRIMARY KEY (graph, id)
		)`,
		`CREATE INDEX svc_threads_touched ON svc_threads (touched)`,
	},
	{ // 2: the usage of the run at the pause (JSON), which its resume goes on from
		`ALTER TABLE svc_threads ADD COLUMN usage TEXT`,
	},
}

// The steps. $1 and $2 are always the graph and the thread's id; the
// status names are threads.go's.
const (
	sqlStart = `INSERT INTO svc_threads (graph, id, status, generation, deadline, touched)
		VALUES ($1, $2, 'running', $3, $4, $5)
		ON CONFLICT (graph, id) DO UPDATE SET status = 'running', generation = excluded.generation,
			deadline = excluded.deadline, touched = excluded.touched,
			node = NULL, field = NULL, interrupt_id = NULL, payload = NULL, state = NULL, usage = NULL
		WHERE svc_threads.status <> 'running' OR svc_threads.deadline < $5 OR svc_threads.touched < $6`
	sqlRead = `SELECT status, deadline, touched, node, field, interrupt_id, payload, state, usage
		FROM svc_threads WHERE graph = $1 AND id = $2`
	sqlClaim = `UPDATE svc_threads SET status = 'running', generation = $3, deadline = $4, touched = $5
		WHERE graph = $1 AND id = $2 AND interrupt_id = $6 AND touched >= $7
			AND (status = 'interrupted' OR (status = 'running' AND deadline < $5))`
	sqlPause = `UPDATE svc_threads SET status = 'interrupted', node = $4, field = $5, interrupt_id = $6,
			payload = $7, state = $8, usage = $9, touched = $10
		WHERE graph = $1 AND id = $2 AND generation = $3 AND status = 'running'
			AND deadline >= $10 AND touched >= $11`
	sqlEnd = `UPDATE svc_threads SET status = $4, node = NULL, field = NULL, interrupt_id = NULL,
			payload = NULL, state = NULL, usage = NULL, touched = $5
		WHERE graph = $1 AND id = $2 AND generation = $3 AND status = 'running'
			AND deadline >= $5 AND touched >= $6`
	sqlCleanup = `DELETE FROM svc_threads WHERE touched < $1`
)

// SQLStore is a database the thread store opens on, as a database
// package (svc.dev/runtime/sqlite, svc.dev/runtime/postgres) hands it over.
type SQLStore struct {
	DB *sql.DB
	// Kind is the checkpointer's kind, "sqlite" or "postgres", which
	// errors name.
	Kind string
	// Graph names the graph's threads in the database.
	Graph string
	// Env names the variable the database came from.
	Env string
	// Lock begins the schema's transaction and serialises processes
	// starting together ("" when BEGIN does).
	Lock string
	// Unreachable says why the service cannot start when the database
	// does not answer.
	Unreachable func(reason string) error
}

// OpenSQL readies the store on s.DB: it checks the database answers and
// brings the schema to its version, in a transaction that begins with
// s.Lock.
func OpenSQL(ctx context.Context, s SQLStore, opts ThreadOptions) (Threads, error) {
	db, kind, graph, env := s.DB, s.Kind, s.Graph, s.Env
	db.SetMaxOpenConns(storeConns)
	db.SetMaxIdleConns(storeConns)
	ctx, cancel := context.WithTimeout(ctx, StoreTimeout)
	defer cancel()
	if err := migrate(ctx, db, s.Lock); err != nil {
		_ = db.Close()
		if errors.Is(err, errNewerSchema) {
			return nil, fmt.Errorf("%s: %w", env, err)
		}
		return nil, s.Unreachable(FirstLine(err))
	}
	t := &sqlThreads{db: db, kind: kind, graph: graph, opts: opts.withDefaults()}
	if t.opts.CleanupEvery > 0 {
		t.stop, t.done = make(chan struct{}), make(chan struct{})
		go t.cleanupEvery(t.opts.CleanupEvery)
	}
	return t, nil
}

// errNewerSchema is a database that a newer service has migrated.
var errNewerSchema = errors.New("schema version")

func migrate(ctx context.Context, db *sql.DB, lock string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if lock != "" {
		if _, err := tx.ExecContext(ctx, lock); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS svc_schema (
		component TEXT PRIMARY KEY, version INTEGER NOT NULL)`); err != nil {
		return err
	}
	version := 0
	err = tx.QueryRowContext(ctx, `SELECT version FROM svc_schema WHERE component = 'threads'`).Scan(&version)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if version > len(threadsSchema) {
		return fmt.Errorf("%w %d: the database's threads were migrated by a newer service "+
			"(this one knows version %d): deploy the newer service", errNewerSchema, version, len(threadsSchema))
	}
	if version == len(threadsSchema) {
		return nil
	}
	for _, step := range threadsSchema[version:] {
		for _, stmt := range step {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO svc_schema (component, version) VALUES ('threads', $1)
		ON CONFLICT (component) DO UPDATE SET version = excluded.version`, len(threadsSchema)); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *sqlThreads) Start(ctx context.Context, id string) (string, error) {
	generation := NewThreadID()
	now := s.opts.Now()
	n, err := s.exec(ctx, sqlStart, id, generation, now.Add(s.opts.RunFor).UnixMilli(), now.UnixMilli(),
		now.Add(-s.opts.TTL).UnixMilli())
	if err != nil {
		return "", err
	}
	if n == 0 {
		return "", threadBusy(id)
	}
	return generation, nil
}

func (s *sqlThreads) Paused(ctx context.Context, id string) (*Paused, error) {
	status, k, err := s.read(ctx, id)
	if err != nil {
		return nil, err
	}
	if status != statusInterrupted {
		return nil, s.refusal(id, status)
	}
	p, err := k.paused()
	if err != nil {
		return nil, nodeError(k.node, err.Error())
	}
	return p, nil
}

func (s *sqlThreads) Claim(ctx context.Context, id, interruptID string) (string, error) {
	generation := NewThreadID()
	now := s.opts.Now()
	n, err := s.exec(ctx, sqlClaim, id, generation, now.Add(s.opts.RunFor).UnixMilli(), now.UnixMilli(),
		interruptID, now.Add(-s.opts.TTL).UnixMilli())
	if err != nil {
		return "", err
	}
	if n == 1 {
		return generation, nil
	}
	// Lost: say why, as the thread is now.
	status, _, err := s.read(ctx, id)
	if err != nil {
		return "", err
	}
	return "", s.refusal(id, status)
}

func (s *sqlThreads) Pause(ctx context.Context, id, generation string, k keptInterrupt) error {
	now := s.opts.Now()
	_, err := s.exec(ctx, sqlPause, id, generation, k.node, k.field, k.id, string(k.value), string(k.state),
		string(k.usage), now.UnixMilli(), now.Add(-s.opts.TTL).UnixMilli())
	return err
}

func (s *sqlThreads) Finish(ctx context.Context, id, generation string) error {
	return s.end(ctx, id, generation, statusDone)
}

func (s *sqlThreads) Fail(ctx context.Context, id, generation string) error {
	return s.end(ctx, id, generation, statusFailed)
}

func (s *sqlThreads) end(ctx context.Context, id, generation, status string) error {
	now := s.opts.Now()
	_, err := s.exec(ctx, sqlEnd, id, generation, status, now.UnixMilli(), now.Add(-s.opts.TTL).UnixMilli())
	return err
}

func (s *sqlThreads) Close() error {
	if s.stop != nil {
		close(s.stop)
		<-s.done
	}
	return s.db.Close()
}

// cleanup deletes the expired threads; it returns how many.
func (s *sqlThreads) cleanup(ctx context.Context) (int64, error) {
	return s.do(ctx, sqlCleanup, s.opts.Now().Add(-s.opts.TTL).UnixMilli())
}

func (s *sqlThreads) cleanupEvery(every time.Duration) {
	defer close(s.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		n, err := s.cleanup(context.Background())
		if log := s.opts.Log; log != nil {
			switch {
			case err != nil:
				// The next round tries again.
				log.Warn("the expired threads could not be deleted", "error", FirstLine(err))
			case n > 0:
				log.Info("deleted expired threads", "threads", n)
			}
		}
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
	}
}

// read is the thread as it stands: its status ("" when unknown or
// expired; a run past its deadline settled) and its interrupt.
func (s *sqlThreads) read(ctx context.Context, id string) (string, keptInterrupt, error) {
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	var status string
	var deadline, touched int64
	var node, field, interruptID sql.NullString
	var k keptInterrupt
	err := s.db.QueryRowContext(ctx, sqlRead, s.graph, id).Scan(&status, &deadline, &touched,
		&node, &field, &interruptID, &k.value, &k.state, &k.usage)
	if errors.Is(err, sql.ErrNoRows) {
		return "", k, nil
	}
	if err != nil {
		return "", k, s.unavailable(err)
	}
	now := s.opts.Now().UnixMilli()
	if touched < now-s.opts.TTL.Milliseconds() {
		return "", k, nil
	}
	if status == statusRunning && deadline < now {
		status = statusFailed
		if interruptID.Valid {
			status = statusInterrupted
		}
	}
	k.node, k.field, k.id = node.String, field.String, interruptID.String
	return status, k, nil
}

// refusal is the answer to a resume of a thread in status.
func (s *sqlThreads) refusal(id, status string) error {
	if status == "" {
		return threadNotFound(id)
	}
	return notInterrupted(id, status)
}

// exec runs a step on the thread id and returns how many rows it changed.
func (s *sqlThreads) exec(ctx context.Context, query, id string, args ...any) (int64, error) {
	return s.do(ctx, query, append([]any{s.graph, id}, args...)...)
}

func (s *sqlThreads) do(ctx context.Context, query string, args ...any) (int64, error) {
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, s.unavailable(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, s.unavailable(err)
	}
	return n, nil
}

// bounded is the context of one step: StoreTimeout, and not cancelled with
// the request, so a client that leaves cannot cut a step in half (was the
// claim made or not?) nor keep a run from being kept.
func (s *sqlThreads) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), StoreTimeout)
}

func (s *sqlThreads) unavailable(err error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: "checkpointer_unavailable",
		Message: fmt.Sprintf("the %s checkpointer cannot be reached (%s); paused threads are kept there: "+
			"retry once it is back", s.kind, FirstLine(err))}
}

// FirstLine is the first line of err's message, as a start-up error
// quotes a database driver's.
func FirstLine(err error) string {
	text, _, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n")
	return text
}
