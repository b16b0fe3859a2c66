package graph

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The "sqlite" checkpointer's own tests; the store contract's and the
// database stores' run on it too (registerDatabase).

func init() {
	registerDatabase("sqlite", database{open: openSQLite, driver: "sqlite", setup: func(t *testing.T) {
		t.Setenv("SVC_TEST_CHECKPOINT", filepath.Join(t.TempDir(), "threads.db"))
	}})
}

func TestOpeningSQLiteNamesTheVariable(t *testing.T) {
	t.Setenv("SVC_TEST_CHECKPOINT", "")
	if _, err := openSQLite(bg, "g", "SVC_TEST_CHECKPOINT", ThreadOptions{}); err == nil ||
		!strings.Contains(err.Error(), "SVC_TEST_CHECKPOINT is not set") || !strings.Contains(err.Error(), "pathEnv") {
		t.Fatalf("unset: %v", err)
	}
	t.Setenv("SVC_TEST_CHECKPOINT", filepath.Join(t.TempDir(), "missing", "threads.db"))
	if _, err := openSQLite(bg, "g", "SVC_TEST_CHECKPOINT", ThreadOptions{}); err == nil ||
		!strings.HasPrefix(err.Error(), "SVC_TEST_CHECKPOINT: the SQLite database") {
		t.Fatalf("no such directory: %v", err)
	}
}

// A path with URI characters names the file it says.
func TestASQLitePathIsTakenAsItIs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a ?b#c%20.db")
	t.Setenv("SVC_TEST_CHECKPOINT", path)
	s, err := openSQLite(bg, "g", "SVC_TEST_CHECKPOINT", ThreadOptions{CleanupEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// The cleanup runs at start and then every CleanupEvery, until Close.
func TestTheCleanupRunsByItself(t *testing.T) {
	t.Setenv("SVC_TEST_CHECKPOINT", filepath.Join(t.TempDir(), "threads.db"))
	c := newClock()
	s, err := openSQLite(bg, "g", "SVC_TEST_CHECKPOINT", ThreadOptions{Now: c.Now, CleanupEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	pauseNew(t, s, "old")
	c.add(ThreadTTL + time.Second)
	db := rawDB(t, "sqlite")
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left int
		if err := db.QueryRow(`SELECT count(*) FROM svc_threads`).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the expired thread is still there")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
