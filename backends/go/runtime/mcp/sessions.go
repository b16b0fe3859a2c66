package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The sessions of the MCP client (client.go), as python-svc keeps them
// (sdk/python/svc/mcp/sessions.py): one per server, opened on first use or
// at start-up, each within the server's timeout; one that broke (the child
// died, the stream ended, the server went away) is dropped and the next
// call opens a new one. A stdio child gets a minimal environment and the
// server's declared variables only, and is stopped with its session.

// stdioStopGrace is how long a stdio child may take to exit after its
// stdin closes, then again after SIGTERM, before it is killed: the MCP
// Python SDK's PROCESS_TERMINATION_TIMEOUT.
const stdioStopGrace = 2 * time.Second

// mcpPool holds a client per registered server (Register: the project's
// mcp_servers.go), each made on first use.
var mcpPool = &mcpClientPool{}

type mcpClientPool struct {
	mu      sync.Mutex
	clients map[string]*mcpClient
	logger  *slog.Logger
	// closing counts the sessions being closed in the background.
	closing sync.WaitGroup
}

// client is the client of the server id, which must be registered.
func (p *mcpClientPool) client(id string) (*mcpClient, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.clients[id]; c != nil {
		return c, nil
	}
	for _, s := range registeredServers {
		if s.ID == id {
			if p.clients == nil {
				p.clients = map[string]*mcpClient{}
			}
			c := &mcpClient{server: s, pool: p}
			p.clients[id] = c
			return c, nil
		}
	}
	return nil, fmt.Errorf("no MCP server %q is declared in logical.mcpServers", id)
}

func (p *mcpClientPool) log() *slog.Logger {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.logger
}

// stop closes every session, stopping the stdio children, and waits for
// them; a later call opens anew.
func (p *mcpClientPool) stop() {
	p.mu.Lock()
	clients := make([]*mcpClient, 0, len(p.clients))
	for _, c := range p.clients {
		clients = append(clients, c)
	}
	p.mu.Unlock()
	for _, c := range clients {
		c.mu.Lock()
		if c.current != nil {
			c.dropLocked(c.current)
		}
		c.mu.Unlock()
	}
	p.closing.Wait()
}

// An mcpClient reaches one server through one session at a time.
type mcpClient struct {
	server Server
	pool   *mcpClientPool
	mu     sync.Mutex
	// current is the open (or opening) session; nil before the first call
	// and after it broke.
	current *mcpSession
	// listed is what the server listed when a session last opened.
	listed map[string]*mcpsdk.Tool
}

// mcpSDKClient introduces the service to every server.
var mcpSDKClient = mcpsdk.NewClient(&mcpsdk.Implementation{Name: "svc-go", Version: "1"},
	// No roots to offer: servers are told nothing about the service's files.
	&mcpsdk.ClientOptions{Capabilities: &mcpsdk.ClientCapabilities{}})

// session is the server's session, opened (or reopened) when there is
// none or it broke; it waits for a session being opened by another call.
func (c *mcpClient) session(ctx context.Context) (*mcpSession, error) {
	c.mu.Lock()
	s := c.current
	if s != nil && !s.usable() {
		c.dropLocked(s)
		s = nil
	}
	if s == nil {
		s = &mcpSession{ready: make(chan struct{}), ended: make(chan struct{})}
		c.current = s
		go c.open(s)
	}
	c.mu.Unlock()
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if s.err != nil {
		c.drop(s)
		return nil, s.err
	}
	return s, nil
}

// drop forgets a session that broke and closes it in the background.
func (c *mcpClient) drop(s *mcpSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(s)
}

func (c *mcpClient) dropLocked(s *mcpSession) {
	if c.current == s {
		c.current = nil
	}
	s.closeOnce.Do(func() {
		c.pool.closing.Add(1)
		go func() {
			defer c.pool.closing.Done()
			<-s.ready
			s.close()
		}()
	})
}

// An mcpOpenError is why a session did not open: the server's declaration
// (an unset variable, a URL that is not one), or it did not within the
// server's timeout, or it could not be reached.
type mcpOpenError struct {
	err      error
	declared bool
	timedOut bool
}

func (e *mcpOpenError) Error() string { return e.err.Error() }

// An mcpSession is one connection to a server.
type mcpSession struct {
	// ready is closed once the session opened or failed to (err).
	ready chan struct{}
	err   error
	cs    *mcpsdk.ClientSession
	// tools are what the server listed when the session opened.
	tools map[string]*listedTool
	// ended is closed when the connection ended, whoever ended it.
	ended chan struct{}
	// stop ends what outlives the session's connection: the transport's
	// context (an SSE stream's), a stdio child's process group.
	stop      func()
	closeOnce sync.Once
	// closed is set when the service closes the session.
	closed atomic.Bool
}

// usable reports whether calls may go to the session: it is opening, or
// it is open and its connection has not ended (a stdio child that exited,
// an SSE stream that closed).
func (s *mcpSession) usable() bool {
	select {
	case <-s.ready:
	default:
		return true
	}
	if s.err != nil {
		return false
	}
	select {
	case <-s.ended:
		return false
	default:
		return true
	}
}

// open connects to the server and lists its tools, all within the server's
// timeout; then it watches the connection, so that a dead child is noticed
// before the next call is sent to it.
func (c *mcpClient) open(s *mcpSession) {
	defer close(s.ready)
	transport, stop, err := c.server.transport()
	if err != nil {
		s.err = &mcpOpenError{err: err, declared: true}
		close(s.ended)
		return
	}
	// The transport lives as long as the session (an SSE stream is read
	// under this context), so it is not the caller's.
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = func() { cancel(); stop() }
	timer := time.AfterFunc(c.server.timeout(), cancel)
	cs, err := mcpSDKClient.Connect(ctx, transport, nil)
	var tools map[string]*listedTool
	if err == nil {
		tools, err = listMCPTools(ctx, cs)
	}
	if !timer.Stop() {
		err = &mcpOpenError{err: fmt.Errorf("no session within %dms", c.server.timeout().Milliseconds()), timedOut: true}
	}
	if err != nil {
		if cs != nil {
			_ = cs.Close()
		}
		s.stop()
		if _, ok := err.(*mcpOpenError); !ok {
			err = &mcpOpenError{err: err}
		}
		s.err = err
		close(s.ended)
		return
	}
	s.cs, s.tools = cs, tools
	listed := make(map[string]*mcpsdk.Tool, len(tools))
	for name, t := range tools {
		listed[name] = t.tool
	}
	c.mu.Lock()
	c.listed = listed
	c.mu.Unlock()
	go func() {
		if err := cs.Wait(); !s.closed.Load() {
			c.pool.log().Warn("an MCP session ended; the next call opens a new one", "server", c.server.ID, "error", err)
		}
		close(s.ended)
	}()
}

// close ends the session: the SDK closes a stdio child's stdin, waits for
// it to exit, then sends SIGTERM and SIGKILL (stdioStopGrace apart);
// whatever is left of the child's process group is stopped after it.
func (s *mcpSession) close() {
	s.closed.Store(true)
	if s.cs != nil {
		_ = s.cs.Close()
		s.stop()
	}
}

const maxMCPListPages = 100

// listMCPTools is every tool the server lists, by name.
func listMCPTools(ctx context.Context, cs *mcpsdk.ClientSession) (map[string]*listedTool, error) {
	tools := map[string]*listedTool{}
	params := &mcpsdk.ListToolsParams{}
	for range maxMCPListPages {
		page, err := cs.ListTools(ctx, params)
		if err != nil {
			return nil, err
		}
		for _, t := range page.Tools {
			tools[t.Name] = &listedTool{tool: t}
		}
		if page.NextCursor == "" {
			break
		}
		params = &mcpsdk.ListToolsParams{Cursor: page.NextCursor}
	}
	return tools, nil
}

// transport is the SDK transport that reaches the server, and what stops
// what the transport leaves behind. It reads the environment: an unset
// variable is an error naming it and the server.
func (s Server) transport() (mcpsdk.Transport, func(), error) {
	where := fmt.Sprintf("MCP server %q", s.ID)
	if s.Transport == "stdio" {
		env, err := s.childEnv()
		if err != nil {
			return nil, nil, err
		}
		cmd := exec.Command(s.Command, s.Args...)
		cmd.Env = env
		cmd.Stderr = os.Stderr
		ownProcessGroup(cmd)
		stop := func() {
			if cmd.Process != nil {
				stopProcessGroup(cmd.Process.Pid, stdioStopGrace)
			}
		}
		return &mcpsdk.CommandTransport{Command: cmd, TerminateDuration: stdioStopGrace}, stop, nil
	}
	endpoint, err := s.envValue("url", s.URL)
	if err != nil {
		return nil, nil, err
	}
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		what := fmt.Sprintf("%q", endpoint)
		if name, ok := strings.CutPrefix(s.URL, "env:"); ok {
			what = "the value of " + name // never repeated: it may hold a secret
		}
		return nil, nil, fmt.Errorf("%s: the url (%s) is not an http(s) URL", where, what)
	}
	headers := make(http.Header, len(s.Headers))
	for _, k := range sortedKeys(s.Headers) {
		v, err := s.envValue("headers."+k, s.Headers[k])
		if err != nil {
			return nil, nil, err
		}
		headers.Set(k, v)
	}
	client := &http.Client{Transport: mcpHeaders{headers, http.DefaultTransport}}
	switch s.Transport {
	case "sse":
		return &mcpsdk.SSEClientTransport{Endpoint: endpoint, HTTPClient: client}, func() {}, nil
	case "streamable_http":
		return &mcpsdk.StreamableClientTransport{
			Endpoint: endpoint, HTTPClient: client,
			// A broken stream fails the session at once (python-svc does
			// not resume either): the next call opens a new one.
			MaxRetries: -1,
			// Calls need no stream of the server's own messages.
			DisableStandaloneSSE: true,
		}, func() {}, nil
	}
	return nil, nil, fmt.Errorf("%s: unknown transport %q (stdio, sse or streamable_http)", where, s.Transport)
}

// describe is err's text without the server's URL where the environment
// gave it: it may hold a secret, and the text goes to the client.
func (s Server) describe(err error) string {
	text := err.Error()
	if endpoint, e := s.envValue("url", s.URL); e == nil && endpoint != s.URL && endpoint != "" {
		text = strings.ReplaceAll(text, endpoint, fmt.Sprintf("(the url of MCP server %q)", s.ID))
	}
	return text
}

// mcpHeaders adds the server's headers to every request.
type mcpHeaders struct {
	headers http.Header
	base    http.RoundTripper
}

func (w mcpHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range w.headers {
		r.Header[k] = v
	}
	return w.base.RoundTrip(r)
}

var mcpEnvRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// envValue reads value from the environment: env:NAME is the variable, and
// ${NAME} inside it is replaced by the variable. key names the value in
// errors.
func (s Server) envValue(key, value string) (string, error) {
	unset := func(name string) error {
		return fmt.Errorf("MCP server %q: %s reads the environment variable %s, which is not set", s.ID, key, name)
	}
	if name, ok := strings.CutPrefix(value, "env:"); ok {
		v, set := os.LookupEnv(name)
		if !set {
			return "", unset(name)
		}
		return v, nil
	}
	var err error
	out := mcpEnvRef.ReplaceAllStringFunc(value, func(m string) string {
		name := m[2 : len(m)-1]
		v, set := os.LookupEnv(name)
		if !set && err == nil {
			err = unset(name)
		}
		return v
	})
	return out, err
}

// childEnv is a stdio child's whole environment: the minimal one and the
// server's Env, each value a reference to one variable.
func (s Server) childEnv() ([]string, error) {
	keys := []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}
	if runtime.GOOS == "windows" {
		keys = []string{"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT",
			"PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE"}
	}
	env := []string{}
	for _, k := range append(keys, "LANG") {
		// A value starting with "()" is a shell function, never passed on.
		if v, ok := os.LookupEnv(k); ok && !strings.HasPrefix(v, "()") {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range sortedKeys(s.Env) {
		if !mcpEnvOnly.MatchString(s.Env[k]) {
			return nil, fmt.Errorf("MCP server %q: env.%s is written inline, but secrets come from the environment only: "+
				"write ${NAME} or env:NAME there and set NAME in the environment", s.ID, k)
		}
		v, err := s.envValue("env."+k, s.Env[k])
		if err != nil {
			return nil, err
		}
		env = append(env, k+"="+v)
	}
	return env, nil
}

// mcpEnvOnly is a value that is one variable and nothing else.
var mcpEnvOnly = regexp.MustCompile(`^(env:[A-Za-z_][A-Za-z0-9_]*|\$\{[A-Za-z_][A-Za-z0-9_]*\})$`)

// sortedKeys lists a map's keys in order, so errors are deterministic.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
