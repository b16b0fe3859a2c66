// Package pgtest starts a throwaway PostgreSQL server for the tests of a
// service whose checkpointer is "postgres": initdb in a temporary
// directory, a free loopback port, trust authentication and no fsync,
// stopped and removed when the test ends. As root the server runs as the
// postgres user, since PostgreSQL refuses to run as root.
package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// A Server is one PostgreSQL server of a test.
type Server struct {
	// URL connects as the superuser svc to the database postgres.
	URL  string
	t    testing.TB
	bin  string
	dir  string
	port int
	// as runs a command as the server's user (runuser, as root).
	as []string
}

// Start starts a server for t, stopped and removed when t ends; t is
// skipped when no PostgreSQL server is installed.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := binaries()
	if bin == "" {
		t.Skip("no PostgreSQL server (initdb, pg_ctl) on PATH or in /usr/lib/postgresql: apt-get install postgresql")
	}
	// Not t.TempDir(): its parent is private to root, and the server's
	// user must reach the directory.
	dir, err := os.MkdirTemp("", "svc-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := &Server{t: t, bin: bin, dir: dir, port: freePort(t)}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("PostgreSQL refuses to run as root and there is no postgres user to run it as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(s.dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		s.as = []string{"runuser", "-u", "postgres", "--"}
	}
	s.URL = fmt.Sprintf("postgres://svc@127.0.0.1:%d/postgres?sslmode=disable", s.port)
	s.run("initdb", "-D", s.data(), "-U", "svc", "--auth=trust", "--no-sync")
	t.Cleanup(s.Stop)
	s.Start()
	return s
}

// Start starts the stopped server again, on the same data and port.
func (s *Server) Start() {
	s.t.Helper()
	s.run("pg_ctl", "-D", s.data(), "-l", filepath.Join(s.dir, "log"), "-w", "-t", "60",
		"-o", fmt.Sprintf("-h 127.0.0.1 -p %d -k %s -c fsync=off", s.port, s.dir), "start")
}

// Stop stops the server at once (a fast shutdown: clients are cut off);
// stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.t.Helper()
	if _, err := os.Stat(filepath.Join(s.data(), "postmaster.pid")); err != nil {
		return
	}
	s.run("pg_ctl", "-D", s.data(), "-m", "fast", "-w", "stop")
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

func (s *Server) run(tool string, args ...string) {
	s.t.Helper()
	argv := append(append(append([]string{}, s.as...), filepath.Join(s.bin, tool)), args...)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		s.t.Fatalf("%s: %v\n%s\n%s", tool, err, out, log)
	}
}

// binaries is the directory of initdb and pg_ctl: PATH's, or the newest
// of /usr/lib/postgresql.
func binaries() string {
	if p, err := exec.LookPath("initdb"); err == nil {
		if dir := filepath.Dir(p); fileExists(filepath.Join(dir, "pg_ctl")) {
			return dir
		}
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(found, func(i, j int) bool { return version(found[i]) < version(found[j]) })
	if len(found) == 0 {
		return ""
	}
	return filepath.Dir(found[len(found)-1])
}

func version(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
