package a2a

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	svc "svc.dev/runtime/graph"
)

// Agents of kind a2a (docs/http-contract.md, "Calling other agents"), with
// the official a2a-go SDK's client, as python-svc calls them with a2a-sdk's:
// the card is fetched without a credential (a URL without a path gets
// /.well-known/agent-card.json, then /.well-known/agent.json on a 404) and
// kept for the next calls; one text message goes to a JSON-RPC endpoint of
// the card (protocol 1.0, else 0.3), carrying skillId in its metadata and
// the credential, which is sent only to the card's own origin. The reply
// is the answer message's text, or a finished task's artifacts (a working
// task is polled within the call's time). Every failure is a 502
// upstream_error naming the agent, with the reason connect, timeout,
// status, invalid_json, too_large or a2a_error. Package graph runs the
// agents of kind a2a here (graph.RegisterA2ACall, from init): in the span
// of a remote agent, the reply sent whole to a streamed run.
const (
	a2aCardPath       = "/.well-known/agent-card.json"
	a2aLegacyCardPath = "/.well-known/agent.json"
	a2aPollInterval   = 250 * time.Millisecond
	// ReasonA2AError: the peer answered a JSON-RPC error, or its task
	// failed, was rejected or asks for input.
	ReasonA2AError = "a2a_error"
)

func init() { svc.RegisterA2ACall(runA2A) }

// a2aCards are the cards fetched, by card URL. A card that led to a
// failure other than the peer's own error is fetched again next time.
var a2aCards sync.Map

// a2aHTTP makes every A2A request: through a2aTransport, never following
// a redirect (a credential does not follow one to another address).
var a2aHTTP = &http.Client{
	Transport: a2aTransport{},
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
}

// a2aCall is what one call's requests share, through their context: the
// credential and where it may go, and what went wrong on the wire.
type a2aCall struct {
	headers map[string]string
	origins map[string]bool
	mu      sync.Mutex
	status  int  // the last answer's, when outside 2xx
	large   bool // a reply over MaxUpstreamBytes
}

type a2aCallKey struct{}

// a2aTransport adds the call's credential to requests bound for an allowed
// origin, notes statuses outside 2xx and caps replies at MaxUpstreamBytes.
// It sends through http.DefaultTransport as it is at the time of the
// request, as graph's own upstream calls do.
type a2aTransport struct{}

func (a2aTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	call, _ := req.Context().Value(a2aCallKey{}).(*a2aCall)
	if call != nil && len(call.headers) > 0 && call.origins[originOf(req.URL)] {
		req = req.Clone(req.Context())
		for k, v := range call.headers {
			req.Header.Set(k, v)
		}
	}
	if tracer := svc.ActiveTracer(); tracer != nil {
		tracer.Inject(req.Context(), req.Header)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || call == nil {
		return resp, err
	}
	call.mu.Lock()
	defer call.mu.Unlock()
	// The status of the last answer, when it is outside 2xx (a card found at
	// the legacy path after a 404 leaves none).
	call.status = 0
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		call.status = resp.StatusCode
	}
	if resp.ContentLength > svc.MaxUpstreamBytes {
		call.large = true
		resp.Body.Close()
		return nil, errA2ATooLarge
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, call: call, left: svc.MaxUpstreamBytes}
	return resp, nil
}

var errA2ATooLarge = errors.New("the reply is larger than 4 MiB")

// cappedBody fails a reply that goes on past its limit.
type cappedBody struct {
	io.ReadCloser
	call *a2aCall
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, _ := b.ReadCloser.Read(one[:]); n > 0 {
			b.call.mu.Lock()
			b.call.large = true
			b.call.mu.Unlock()
			return 0, errA2ATooLarge
		}
	}
	if int64(len(p)) > b.left && b.left > 0 {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// originOf is scheme://host:port, the port spelt out.
func originOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if strings.EqualFold(u.Scheme, "https") {
			port = "443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// runA2A sends task to the A2A agent a, bounded by its timeout and the
// run's deadline. A variable the agent needs that is unset or empty is a
// configuration error of the node, as for remote agents.
func runA2A(ctx context.Context, node string, a *svc.Agent, task string) (string, error) {
	if name, ok := strings.CutPrefix(a.CardURL, "env:"); ok && os.Getenv(name) == "" {
		return "", configError(node, fmt.Sprintf(
			`node %q failed: ConfigError: the agent card URL of agent "%s" is not set: it reads the environment variable %s; set it in the environment`,
			node, a.Name, name))
	}
	cardURL, err := svc.ResolveURL(a.Name, "agent card", a.CardURL, nil)
	if err != nil {
		return "", err
	}
	key := ""
	if a.KeyEnv != "" {
		if key = os.Getenv(a.KeyEnv); key == "" {
			return "", configError(node, fmt.Sprintf(
				`node %q failed: ConfigError: the credential of agent "%s" is not set: it reads the environment variable %s; set it in the environment`,
				node, a.Name, a.KeyEnv))
		}
	}
	parsed, _ := url.Parse(cardURL) // ResolveURL checked it
	cards := []string{cardURL}
	if parsed.Path == "" || parsed.Path == "/" {
		root := strings.TrimRight(cardURL, "/")
		cards = []string{root + a2aCardPath, root + a2aLegacyCardPath}
	}
	call := &a2aCall{origins: map[string]bool{originOf(parsed): true}}
	if a.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.Timeout)
		defer cancel()
	}
	ctx = context.WithValue(ctx, a2aCallKey{}, call)
	used, card, err := a2aCard(ctx, cards)
	if err == nil {
		call.headers = a2aCredential(card, key)
		var text string
		if text, err = a2aSend(ctx, a, card, task); err == nil {
			return text, nil
		}
	}
	failure := a2aFailure(ctx, a.Name, call, err)
	if used != "" && failure.Details["reason"] != ReasonA2AError {
		a2aCards.Delete(used)
	}
	return "", failure
}

// configError is the node's execution_error of a variable the agent needs
// that is not set.
func configError(node, message string) *svc.Error {
	return &svc.Error{Status: http.StatusInternalServerError, Code: "execution_error", Message: message,
		Details: map[string]any{"node": node}}
}

// a2aCard is the (kept) card of the first card URL that answers, and that URL.
func a2aCard(ctx context.Context, cards []string) (string, *a2asdk.AgentCard, error) {
	for i, u := range cards {
		if kept, ok := a2aCards.Load(u); ok {
			return u, kept.(*a2asdk.AgentCard), nil
		}
		card, status, err := fetchCard(ctx, u)
		if status == http.StatusNotFound && i+1 < len(cards) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		a2aCards.Store(u, card)
		return u, card, nil
	}
	return "", nil, errors.New("no agent card URL")
}

// errA2ACard is a card that cannot be read.
type errA2ACard struct{ err error }

func (e errA2ACard) Error() string { return "the agent card cannot be read: " + e.err.Error() }

// fetchCard GETs one card, without a credential (the call's headers go
// only on the JSON-RPC requests).
func fetchCard(ctx context.Context, u string) (*a2asdk.AgentCard, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := a2aHTTP.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, resp.StatusCode, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode, fmt.Errorf("the agent card answered HTTP %d", resp.StatusCode)
	}
	card, err := parseCard(body)
	if err != nil {
		return nil, resp.StatusCode, errA2ACard{err}
	}
	return card, resp.StatusCode, nil
}

// a2aCredential is the header carrying key as the card asks for it: the
// header of its API-key scheme, else a bearer token when it declares only
// HTTP bearer authentication, else X-API-Key.
func a2aCredential(card *a2asdk.AgentCard, key string) map[string]string {
	if key == "" {
		return nil
	}
	bearer := false
	for _, s := range card.SecuritySchemes {
		switch s := s.(type) {
		case a2asdk.APIKeySecurityScheme:
			if s.Location == a2asdk.APIKeySecuritySchemeLocationHeader && s.Name != "" {
				return map[string]string{s.Name: key}
			}
		case a2asdk.HTTPAuthSecurityScheme:
			bearer = bearer || strings.EqualFold(s.Scheme, "bearer")
		}
	}
	if bearer {
		return map[string]string{"Authorization": "Bearer " + key}
	}
	return map[string]string{"X-API-Key": key}
}

// a2aSend sends the one message and reads the reply's text.
func a2aSend(ctx context.Context, a *svc.Agent, card *a2asdk.AgentCard, task string) (string, error) {
	call := ctx.Value(a2aCallKey{}).(*a2aCall)
	// The credential goes only where the configuration points.
	allowed := *card
	allowed.SupportedInterfaces = nil
	for _, i := range card.SupportedInterfaces {
		if u, err := url.Parse(i.URL); err == nil && call.origins[originOf(u)] {
			allowed.SupportedInterfaces = append(allowed.SupportedInterfaces, i)
		}
	}
	if len(allowed.SupportedInterfaces) == 0 {
		return "", svc.UpstreamError(a.Name, svc.ReasonConnect, fmt.Sprintf(
			"A2A agent %q: the card's endpoints are not on the card's origin; nothing is sent to them", a.Name))
	}
	client, err := a2aclient.NewFromCard(ctx, &allowed,
		a2aclient.WithJSONRPCTransport(a2aHTTP),
		a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: a2aHTTP}))
	if err != nil {
		return "", svc.UpstreamError(a.Name, ReasonA2AError, fmt.Sprintf(
			"A2A agent %q: no JSON-RPC endpoint on its card (%v)", a.Name, err))
	}
	defer client.Destroy()
	msg := a2asdk.NewMessage(a2asdk.MessageRoleUser, a2asdk.NewTextPart(task))
	if a.SkillID != "" {
		msg.SetMeta("skillId", a.SkillID)
	}
	result, err := client.SendMessage(ctx, &a2asdk.SendMessageRequest{Message: msg})
	if err != nil {
		return "", err
	}
	var reply string
	switch r := result.(type) {
	case *a2asdk.Message:
		reply = partsText(r.Parts)
	case *a2asdk.Task:
		if reply, err = taskText(ctx, a.Name, client, r); err != nil {
			return "", err
		}
	default:
		return "", svc.UpstreamError(a.Name, svc.ReasonInvalidJSON, fmt.Sprintf("A2A agent %q: no reply", a.Name))
	}
	if reply == "" {
		return "", svc.UpstreamError(a.Name, svc.ReasonInvalidJSON, fmt.Sprintf("A2A agent %q: the reply holds no text", a.Name))
	}
	return reply, nil
}

// taskText waits for a task to end (the call's own bound ends the wait)
// and reads its artifacts, else its status message, else its last agent
// message.
func taskText(ctx context.Context, agent string, client *a2aclient.Client, task *a2asdk.Task) (string, error) {
	for task.Status.State == a2asdk.TaskStateSubmitted || task.Status.State == a2asdk.TaskStateWorking {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(a2aPollInterval):
		}
		next, err := client.GetTask(ctx, &a2asdk.GetTaskRequest{ID: task.ID})
		if err != nil {
			return "", err
		}
		task = next
	}
	said := ""
	if task.Status.Message != nil {
		said = partsText(task.Status.Message.Parts)
	}
	if task.Status.State != a2asdk.TaskStateCompleted {
		what := strings.ToLower(strings.TrimPrefix(string(task.Status.State), "TASK_STATE_"))
		msg := fmt.Sprintf("A2A agent %q: its task ended %s", agent, what)
		if said != "" {
			msg += ": " + said
		}
		return "", svc.UpstreamError(agent, ReasonA2AError, msg)
	}
	var texts []string
	for _, art := range task.Artifacts {
		if t := partsText(art.Parts); t != "" {
			texts = append(texts, t)
		}
	}
	if text := strings.Join(texts, "\n"); text != "" {
		return text, nil
	}
	if said != "" {
		return said, nil
	}
	for i := len(task.History) - 1; i >= 0; i-- {
		if task.History[i].Role == a2asdk.MessageRoleAgent {
			return partsText(task.History[i].Parts), nil
		}
	}
	return "", nil
}

// partsText joins the text parts, and data parts as JSON, with newlines.
func partsText(parts a2asdk.ContentParts) string {
	var texts []string
	for _, p := range parts {
		switch c := p.Content.(type) {
		case a2asdk.Text:
			texts = append(texts, string(c))
		case a2asdk.Data:
			if s, err := svc.PyJSON(c.Value); err == nil {
				texts = append(texts, s)
			}
		}
	}
	return strings.Join(texts, "\n")
}

// a2aFailure is the upstream_error of anything a call returned.
func a2aFailure(ctx context.Context, agent string, call *a2aCall, err error) *svc.Error {
	var own *svc.Error
	if errors.As(err, &own) {
		return own
	}
	call.mu.Lock()
	status, large := call.status, call.large
	call.mu.Unlock()
	var rpc *a2asdk.Error
	var card errA2ACard
	var ne net.Error
	switch {
	case large || errors.Is(err, errA2ATooLarge):
		return svc.UpstreamError(agent, svc.ReasonTooLarge,
			fmt.Sprintf("A2A agent %q: the reply is larger than %d bytes", agent, svc.MaxUpstreamBytes))
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout()):
		return svc.UpstreamError(agent, svc.ReasonTimeout, fmt.Sprintf("A2A agent %q: the call timed out", agent))
	case status != 0:
		e := svc.UpstreamError(agent, svc.ReasonStatus, fmt.Sprintf("A2A agent %q: answered HTTP %d", agent, status))
		e.Details["status"] = status
		return e
	case errors.As(err, &rpc):
		return svc.UpstreamError(agent, ReasonA2AError, fmt.Sprintf("A2A agent %q answered an error: %s", agent, rpc.Message))
	case errors.As(err, &card):
		return svc.UpstreamError(agent, svc.ReasonInvalidJSON, fmt.Sprintf("A2A agent %q: %v", agent, err))
	}
	var ue *url.Error
	if errors.As(err, &ue) || errors.As(err, &ne) {
		if ue != nil {
			err = ue.Err // a *url.Error repeats the URL, which may hold a secret
		}
		return svc.UpstreamError(agent, svc.ReasonConnect, fmt.Sprintf("A2A agent %q: cannot reach it: %v", agent, err))
	}
	if text := err.Error(); strings.Contains(text, "failed to send HTTP request") {
		return svc.UpstreamError(agent, svc.ReasonConnect, fmt.Sprintf("A2A agent %q: cannot reach it", agent))
	}
	// The SDK's "failed to decode response", "result violates A2A spec", ...
	return svc.UpstreamError(agent, svc.ReasonInvalidJSON, fmt.Sprintf("A2A agent %q: the reply cannot be read: %v", agent, err))
}
