package graph

import (
	"strings"
	"testing"
	"time"

	"svc.dev/runtime/pgtest"
)

// The "postgres" checkpointer's own tests, each on a PostgreSQL server of
// its own; the store contract's and the database stores' run on it too
// (registerDatabase).

func init() {
	registerDatabase("postgres", database{open: openPostgres, driver: "pgx", setup: func(t *testing.T) {
		t.Setenv("SVC_TEST_CHECKPOINT", pgtest.Start(t).URL)
	}})
}

func TestOpeningPostgresNamesTheVariable(t *testing.T) {
	t.Setenv("SVC_TEST_CHECKPOINT", "")
	if _, err := openPostgres(bg, "g", "SVC_TEST_CHECKPOINT", ThreadOptions{}); err == nil ||
		!strings.Contains(err.Error(), "SVC_TEST_CHECKPOINT is not set") || !strings.Contains(err.Error(), "urlEnv") {
		t.Fatalf("unset: %v", err)
	}
	// Nothing listens on port 1; the password never shows.
	t.Setenv("SVC_TEST_CHECKPOINT", "postgres://svc:s3cret-pw@127.0.0.1:1/none")
	_, err := openPostgres(bg, "g", "SVC_TEST_CHECKPOINT", ThreadOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), "SVC_TEST_CHECKPOINT: the PostgreSQL database cannot be reached") ||
		strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("nothing there: %v", err)
	}
	t.Setenv("SVC_TEST_CHECKPOINT", "postgres://svc:s3cret-pw@[::1/none")
	if _, err := openPostgres(bg, "g", "SVC_TEST_CHECKPOINT", ThreadOptions{}); err == nil ||
		!strings.HasPrefix(err.Error(), "SVC_TEST_CHECKPOINT: not a PostgreSQL connection URL") ||
		strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("not a URL: %v", err)
	}
}

// A database that goes away is 503 checkpointer_unavailable, the threads
// wait there, and the store answers again as soon as it is back.
func TestAPostgresThatGoesAwayIs503UntilItIsBack(t *testing.T) {
	pg := pgtest.Start(t)
	t.Setenv("SVC_TEST_CHECKPOINT", pg.URL)
	s, err := openPostgres(bg, "g", "SVC_TEST_CHECKPOINT", ThreadOptions{CleanupEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := pauseNew(t, s, "t1")
	pg.Stop()
	if _, err := s.Paused(bg, "t1"); code(err) != "checkpointer_unavailable" || !strings.Contains(err.Error(), "postgres") {
		t.Fatalf("read: %v", err)
	}
	if _, err := s.Start(bg, "t2"); code(err) != "checkpointer_unavailable" {
		t.Fatalf("start: %v", err)
	}
	pg.Start()
	if _, err := s.Claim(bg, "t1", id); err != nil {
		t.Fatalf("once back: %v", err)
	}
}

// The database goes away during a run: the run's end cannot be kept (503),
// the thread waits at its interrupt, and once the database is back and the
// run's time has passed it is resumed (python-svc's
// test_a_database_lost_mid_run_leaves_the_thread_at_its_interrupt).
func TestAPostgresThatGoesAwayDuringARunKeepsTheThread(t *testing.T) {
	pg := pgtest.Start(t)
	t.Setenv("SVC_TEST_CHECKPOINT", pg.URL)
	c := newClock()
	s, err := openPostgres(bg, "g", "SVC_TEST_CHECKPOINT", ThreadOptions{CleanupEvery: -1, Now: c.Now, RunFor: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := pauseNew(t, s, "t1")
	run := must(s.Claim(bg, "t1", id))(t)
	pg.Stop() // mid-run
	if err := s.Finish(bg, "t1", run); code(err) != "checkpointer_unavailable" {
		t.Fatalf("the run's end with the database away: %v", err)
	}
	pg.Start()
	if _, err := s.Paused(bg, "t1"); code(err) != "not_interrupted" {
		t.Fatalf("a run still under way: %v", err)
	}
	c.add(time.Minute + time.Second)
	if p := must(s.Paused(bg, "t1"))(t); p.ID != id {
		t.Fatalf("not paused again at its interrupt: %+v", p)
	}
	must(s.Claim(bg, "t1", id))(t)
}
