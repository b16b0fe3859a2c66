package a2a

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strings"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"svc.dev/runtime/graph"
	"svc.dev/runtime/server"
)

// The graph published as an A2A agent (settings.a2a; docs/http-contract.md,
// "A2A"), as python-svc publishes it: the agent card at both well-known
// paths (public, with an ETag), JSON-RPC at /a2a behind the callers of
// settings.a2a.tokens or else the credential of /invoke (credentials.go),
// A2A 1.0 and 0.3 answered at the same URL by the a2a-go SDK's two
// JSON-RPC handlers over one stateless request handler: a message in, one
// reply message out, no task kept (any replica answers any request). The
// caller reaches the run in its context (graph.Caller). Package server
// routes the paths here (server.HandleA2A), answering their 405 itself.
const a2aRPCPath = "/a2a"

// Spec is settings.a2a as compiled (a2a_agent.go holds the graph's).
type Spec struct {
	Title, Description, Version string
	// InputField takes a message's text; InputMessages appends it to that
	// field as a user message instead.
	InputField    string
	InputMessages bool
	Skills        []Skill
	// Tokens are the callers of settings.a2a.tokens.
	Tokens []Token
}

// Skill is a skill of settings.a2a: a message names it in its metadata
// ({"skillId"}); a skill with Roles is for the callers holding one of them.
type Skill struct {
	ID, Name, Description string
	Tags, Roles           []string
}

// a2aAgent is settings.a2a, as the project publishes it.
var a2aAgent Spec

// Publish makes spec the graph's A2A agent (settings.a2a): a project's
// a2a_agent.go calls it from init. Package server's Open reads the
// callers' tokens once, before the service listens (an unset variable
// stops the service); the handler of the card's paths and /a2a is made
// with them (server.HandleA2A).
func Publish(spec Spec) {
	a2aAgent = spec
	server.HandleA2A(func() (func(cfg server.Config) http.Handler, error) {
		table, err := loadA2ATokens(a2aAgent.Tokens, os.Getenv)
		if err != nil {
			return nil, err
		}
		return func(cfg server.Config) http.Handler { return newA2AServer(cfg, a2aAgent, table) }, nil
	})
}

type a2aServer struct {
	cfg       server.Config
	spec      Spec
	responder *a2aResponder
	creds     *a2aCredentials
	current   http.Handler // A2A 1.0
	legacy    http.Handler // A2A 0.3
}

// newA2AServer publishes spec to the callers of table (loadA2ATokens) on
// the service with cfg.
func newA2AServer(cfg server.Config, spec Spec, table []callerToken) *a2aServer {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	h := &a2aResponder{skills: map[string]*Skill{},
		input: graph.A2AInput{Name: spec.InputField, Messages: spec.InputMessages}}
	for i := range spec.Skills {
		h.skills[spec.Skills[i].ID] = &spec.Skills[i]
	}
	if len(spec.Skills) == 1 {
		h.only = &spec.Skills[0]
	}
	panics := a2asrv.WithTransportPanicHandler(func(r any) error {
		cfg.Logger.Error("the A2A request failed", "panic", fmt.Sprint(r))
		return a2asdk.NewError(a2asdk.ErrInternalError, "execution_error: the request failed")
	})
	return &a2aServer{
		cfg:       cfg,
		spec:      spec,
		responder: h,
		creds:     newA2ACredentials(cfg, table),
		current:   a2asrv.NewJSONRPCHandler(h, panics),
		legacy:    a2av0.NewJSONRPCHandler(h, panics),
	}
}

// ServeHTTP answers past what package server answers first (405; it
// drains what is left of a body at /a2a after).
func (a *a2aServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != a2aRPCPath {
		a.card(w, r)
		return
	}
	caller := a.creds.identify(r)
	if caller == nil {
		if challenge := a.creds.challenge(); challenge != "" {
			w.Header().Set("WWW-Authenticate", challenge)
		}
		server.WriteError(w, &graph.Error{Status: http.StatusUnauthorized, Code: "unauthorized",
			Message: "missing or wrong credential"})
		return
	}
	if r.ContentLength > server.MaxRequestBytes {
		tooLarge(w)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, server.MaxRequestBytes))
	if err != nil {
		tooLarge(w)
		return
	}
	var head struct {
		ID     any    `json:"id"`
		Method string `json:"method"`
		Params struct {
			Message struct {
				Metadata map[string]any `json:"metadata"`
			} `json:"message"`
		} `json:"params"`
	}
	// Read as the SDK's JSON-RPC handlers read it: the first JSON value,
	// whatever follows it. A body that is not JSON-RPC is theirs to answer
	// (-32700, -32600), and so is an unknown skill. This check answers the
	// contract's 403; the responder checks the roles again on the message
	// the SDK parsed (answer).
	_ = json.NewDecoder(bytes.NewReader(body)).Decode(&head)
	if a2aSendMethods[head.Method] {
		if skill, err := a.responder.skill(head.Params.Message.Metadata); err == nil && !caller.mayCall(skill) {
			server.WriteError(w, caller.forbidden(skill))
			return
		}
	}
	ctx := context.WithValue(graph.WithCaller(r.Context(), caller.caller), a2aIdentityKey{}, caller)
	r = r.WithContext(ctx)
	r.Body = io.NopCloser(bytes.NewReader(body))
	w.Header().Set("Content-Type", "application/json")
	// Every A2A 0.3 method name has a "/", no 1.0 name has one.
	if strings.Contains(head.Method, "/") {
		a.legacy.ServeHTTP(w, r)
		return
	}
	if head.Method != "" && !strings.HasPrefix(r.Header.Get("A2A-Version"), "1.") {
		// As a2a-sdk for Python answers: a request without the header is
		// taken as 0.3, whose methods these are not.
		data, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": head.ID, "error": map[string]any{
			"code":    -32009,
			"message": fmt.Sprintf("%s is an A2A 1.0 method: send the header A2A-Version: 1.0", head.Method),
		}})
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(data)
		return
	}
	a.current.ServeHTTP(w, r)
}

// tooLarge refuses a body over server.MaxRequestBytes, as package server
// refuses one.
func tooLarge(w http.ResponseWriter) {
	server.WriteError(w, &graph.Error{Status: http.StatusRequestEntityTooLarge, Code: "payload_too_large",
		Message: "the request body is larger than 1 MiB"})
}

// card answers GET (and HEAD; package server answers other methods) of the
// card at either path, without a credential.
func (a *a2aServer) card(w http.ResponseWriter, r *http.Request) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(cardOf(a.spec, scheme+"://"+r.Host+a2aRPCPath, a.creds.schemes))
	body := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if err != nil {
		server.WriteError(w, &graph.Error{Status: http.StatusInternalServerError, Code: "execution_error",
			Message: "the agent card cannot be written"})
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "no-cache")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

// The card, in the layout a2a-sdk for Python writes: the A2A 1.0 fields
// (ProtoJSON), then the 0.3 ones for older clients. Field order is the
// struct's.
type agentCard struct {
	Name                 string                `json:"name"`
	Description          string                `json:"description"`
	SupportedInterfaces  []agentInterface      `json:"supportedInterfaces"`
	Version              string                `json:"version"`
	Capabilities         agentCapabilities     `json:"capabilities"`
	SecuritySchemes      map[string]any        `json:"securitySchemes,omitempty"`
	SecurityRequirements []securityRequirement `json:"securityRequirements,omitempty"`
	DefaultInputModes    []string              `json:"defaultInputModes"`
	DefaultOutputModes   []string              `json:"defaultOutputModes"`
	Skills               []cardSkill           `json:"skills"`
	PreferredTransport   string                `json:"preferredTransport"`
	ProtocolVersion      string                `json:"protocolVersion"`
	Security             []map[string][]string `json:"security,omitempty"`
	URL                  string                `json:"url"`
}

type agentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

type agentCapabilities struct {
	Streaming         bool `json:"streaming"`
	PushNotifications bool `json:"pushNotifications"`
}

// securityRequirement is one alternative: scheme name to its scopes, in
// ProtoJSON's {"list": [...]} (written {} when empty).
type securityRequirement struct {
	Schemes map[string]scopeList `json:"schemes"`
}

type scopeList struct {
	List []string `json:"list,omitempty"`
}

type cardSkill struct {
	ID                   string                `json:"id"`
	Name                 string                `json:"name"`
	Description          string                `json:"description"`
	Tags                 []string              `json:"tags"`
	SecurityRequirements []securityRequirement `json:"securityRequirements,omitempty"`
	Security             []map[string][]string `json:"security,omitempty"`
}

// cardOf is the card of spec served at endpoint, declaring the schemes
// /a2a accepts ("bearer": Authorization: Bearer, "api_key": X-API-Key).
func cardOf(spec Spec, endpoint string, names []string) agentCard {
	schemes := map[string]any{}
	for _, name := range names {
		switch name {
		case "api_key":
			schemes["api_key"] = map[string]any{
				"apiKeySecurityScheme": map[string]any{"description": "X-API-Key: <key>", "location": "header", "name": "X-API-Key"},
				"description":          "X-API-Key: <key>", "in": "header", "name": "X-API-Key", "type": "apiKey",
			}
		case "bearer":
			schemes["bearer"] = map[string]any{
				"httpAuthSecurityScheme": map[string]any{"description": "Authorization: Bearer <token>", "scheme": "Bearer"},
				"description":            "Authorization: Bearer <token>", "scheme": "Bearer", "type": "http",
			}
		}
	}
	// Alternatives: any one scheme suffices; a skill's roles are its scopes.
	requirements := func(roles []string) ([]securityRequirement, []map[string][]string) {
		var current []securityRequirement
		var legacy []map[string][]string
		for _, n := range names {
			current = append(current, securityRequirement{Schemes: map[string]scopeList{n: {List: roles}}})
			legacy = append(legacy, map[string][]string{n: append([]string{}, roles...)})
		}
		return current, legacy
	}
	card := agentCard{
		Name:        spec.Title,
		Description: spec.Description,
		SupportedInterfaces: []agentInterface{
			{URL: endpoint, ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"},
			{URL: endpoint, ProtocolBinding: "JSONRPC", ProtocolVersion: "0.3"},
		},
		Version:            spec.Version,
		Capabilities:       agentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		PreferredTransport: "JSONRPC",
		ProtocolVersion:    "0.3",
		URL:                endpoint,
	}
	if len(names) > 0 {
		card.SecuritySchemes = schemes
		card.SecurityRequirements, card.Security = requirements(nil)
	}
	for _, s := range spec.Skills {
		skill := cardSkill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: s.Tags}
		if len(s.Roles) > 0 && len(names) > 0 {
			skill.SecurityRequirements, skill.Security = requirements(s.Roles)
		}
		card.Skills = append(card.Skills, skill)
	}
	return card
}

// a2aSendMethods are the methods whose skill's roles are checked before
// dispatch (1.0 and 0.3 names).
var a2aSendMethods = map[string]bool{"SendMessage": true, "SendStreamingMessage": true,
	"message/send": true, "message/stream": true}

// a2aIdentityKey holds the *a2aIdentity of the request in its context,
// for the responder's own check of the skill's roles.
type a2aIdentityKey struct{}

// a2aResponder is the stateless request handler: the graph answers each
// message; there are no tasks to get, cancel or subscribe to.
type a2aResponder struct {
	skills map[string]*Skill
	// only is the agent's one skill, which a message may leave unnamed;
	// nil when there are several.
	only  *Skill
	input graph.A2AInput
}

// skill is the skill a message's metadata names.
func (h *a2aResponder) skill(meta map[string]any) (*Skill, error) {
	id, present := meta["skillId"]
	if !present || id == nil || id == "" {
		if h.only != nil {
			return h.only, nil
		}
		return nil, a2asdk.NewError(a2asdk.ErrInvalidParams, fmt.Sprintf(
			`name the skill in the message metadata, {"skillId": "<id>"}: this agent has %s`, h.known()))
	}
	name, _ := id.(string)
	if s, ok := h.skills[name]; ok {
		return s, nil
	}
	return nil, a2asdk.NewError(a2asdk.ErrInvalidParams, fmt.Sprintf("no skill %s: this agent has %s", quoted(id), h.known()))
}

// known lists the skills' ids, for an error.
func (h *a2aResponder) known() string {
	ids := make([]string, 0, len(h.skills))
	for id := range h.skills {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return strings.Join(ids, ", ")
}

func quoted(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// answer runs the graph on the message's text and replies with one
// message.
func (h *a2aResponder) answer(ctx context.Context, req *a2asdk.SendMessageRequest) (*a2asdk.Message, error) {
	if req == nil || req.Message == nil {
		return nil, a2asdk.NewError(a2asdk.ErrInvalidParams, "the request has no message")
	}
	msg := req.Message
	if msg.TaskID != "" {
		return nil, a2asdk.NewError(a2asdk.ErrTaskNotFound, fmt.Sprintf("no task %s: this agent keeps no tasks", quoted(msg.TaskID)))
	}
	skill, err := h.skill(msg.Metadata)
	if err != nil {
		return nil, err
	}
	// The roles again, on the message as the SDK read it (the 403 before
	// dispatch read the body itself), as python-svc's handler checks them.
	caller, _ := ctx.Value(a2aIdentityKey{}).(*a2aIdentity)
	if caller == nil {
		return nil, a2asdk.NewError(a2asdk.ErrInternalError, "the request reached the agent without a caller")
	}
	if !caller.mayCall(skill) {
		return nil, a2asdk.NewError(a2asdk.ErrInvalidRequest, fmt.Sprintf("the skill %q is not for this caller", skill.ID))
	}
	var texts []string
	for _, p := range msg.Parts {
		if t, ok := p.Content.(a2asdk.Text); ok {
			texts = append(texts, string(t))
		}
	}
	if len(texts) == 0 {
		return nil, a2asdk.NewError(a2asdk.ErrUnsupportedContentType, "send the message as text parts")
	}
	text, err := graph.RunA2A(ctx, h.input, strings.Join(texts, "\n"))
	if err == nil && len(text) > server.MaxResponseBytes {
		err = &graph.Error{Status: http.StatusInternalServerError, Code: "execution_error",
			Message: "the response is larger than 4 MiB", Details: map[string]any{"reason": "response_too_large"}}
	}
	if err != nil {
		// The contract's error of the failed run, as /invoke answers it.
		var e *graph.Error
		if !errors.As(err, &e) {
			e = &graph.Error{Status: http.StatusInternalServerError, Code: "execution_error", Message: err.Error()}
		}
		kind := a2asdk.ErrInternalError
		if e.Status == http.StatusBadRequest || e.Status == http.StatusUnprocessableEntity {
			kind = a2asdk.ErrInvalidParams
		}
		return nil, a2asdk.NewError(kind, e.Code+": "+e.Message).WithErrorInfoMeta(graph.A2AErrorData(e))
	}
	reply := a2asdk.NewMessage(a2asdk.MessageRoleAgent, a2asdk.NewTextPart(text))
	reply.ContextID = msg.ContextID
	if reply.ContextID == "" {
		reply.ContextID = a2asdk.NewContextID()
	}
	return reply, nil
}

func (h *a2aResponder) SendMessage(ctx context.Context, req *a2asdk.SendMessageRequest) (a2asdk.SendMessageResult, error) {
	reply, err := h.answer(ctx, req)
	if err != nil {
		return nil, err
	}
	return reply, nil
}

// SendStreamingMessage sends the reply as the stream's only event.
func (h *a2aResponder) SendStreamingMessage(ctx context.Context, req *a2asdk.SendMessageRequest) iter.Seq2[a2asdk.Event, error] {
	return func(yield func(a2asdk.Event, error) bool) {
		reply, err := h.answer(ctx, req)
		if err != nil {
			yield(nil, err)
			return
		}
		yield(reply, nil)
	}
}

var errNoTasks = a2asdk.NewError(a2asdk.ErrTaskNotFound, "this agent keeps no tasks")

func (h *a2aResponder) GetTask(context.Context, *a2asdk.GetTaskRequest) (*a2asdk.Task, error) {
	return nil, errNoTasks
}

func (h *a2aResponder) ListTasks(context.Context, *a2asdk.ListTasksRequest) (*a2asdk.ListTasksResponse, error) {
	return &a2asdk.ListTasksResponse{Tasks: []*a2asdk.Task{}}, nil
}

func (h *a2aResponder) CancelTask(context.Context, *a2asdk.CancelTaskRequest) (*a2asdk.Task, error) {
	return nil, errNoTasks
}

func (h *a2aResponder) SubscribeToTask(context.Context, *a2asdk.SubscribeToTaskRequest) iter.Seq2[a2asdk.Event, error] {
	return func(yield func(a2asdk.Event, error) bool) { yield(nil, errNoTasks) }
}

func (h *a2aResponder) GetTaskPushConfig(context.Context, *a2asdk.GetTaskPushConfigRequest) (*a2asdk.PushConfig, error) {
	return nil, a2asdk.ErrPushNotificationNotSupported
}

func (h *a2aResponder) ListTaskPushConfigs(context.Context, *a2asdk.ListTaskPushConfigRequest) (*a2asdk.ListTaskPushConfigResponse, error) {
	return nil, a2asdk.ErrPushNotificationNotSupported
}

func (h *a2aResponder) CreateTaskPushConfig(context.Context, *a2asdk.PushConfig) (*a2asdk.PushConfig, error) {
	return nil, a2asdk.ErrPushNotificationNotSupported
}

func (h *a2aResponder) DeleteTaskPushConfig(context.Context, *a2asdk.DeleteTaskPushConfigRequest) error {
	return a2asdk.ErrPushNotificationNotSupported
}

func (h *a2aResponder) GetExtendedAgentCard(context.Context, *a2asdk.GetExtendedAgentCardRequest) (*a2asdk.AgentCard, error) {
	return nil, a2asdk.ErrExtendedCardNotConfigured
}
