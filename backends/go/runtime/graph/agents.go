package graph

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// Agents (logical.agents) and the tool-calling loop of llm nodes with
// boundToolIds, with python-svc's semantics: the same model requests, the
// same texts shown to the model and the same errors. An agent runs in an
// isolated scope: its conversation, tool calls and tool results never touch
// the graph state; only its final text is returned to the node.

// An AgentTool is a tool an agent or a tool-calling llm node may call
// (native or HTTP).
type AgentTool struct {
	// Name is the registered name, sent to the model as function.name.
	Name string
	// Description is sent to the model ("" when none).
	Description string
	// Listed, when not nil, gives the description and the input schema the
	// tool's MCP server listed ("" and nil before a session opened): the
	// model sees that schema as the parameters, and that description when
	// Description is "".
	Listed func() (string, map[string]any)
	// Call runs the tool on the arguments object of the model's call. An
	// *Error (an HTTP tool's upstream error) ends the run as it is; any
	// other error is the agent's tool_error.
	Call func(ctx context.Context, args map[string]any) (any, error)
}

// An Agent of logical.agents.
type Agent struct {
	Name, Kind, Description string // Kind: "worker", "supervisor", "remote", "a2a"
	// Roles are the caller roles allowed to run the agent (any one
	// suffices); none means anyone.
	Roles []string

	// worker

	// Instructions is the system prompt, composed at compile time
	// (persona, then instructions); "" for none. A supervisor's llm router
	// starts its prompt with it.
	Instructions string
	// Tools are names in agentTools, in order.
	Tools []string
	// Model is where the worker's (or the llm router's) requests go.
	Model    Model
	MaxTurns int

	// supervisor

	Members []string
	// Route is the custom router's body; nil for the llm router.
	Route     func(ctx context.Context, state State) (string, error)
	MaxRounds int

	// remote

	// URL is a literal http(s) URL or "env:NAME".
	URL string
	// KeyEnv names the variable holding the credential (remote: sent as
	// X-API-Key; a2a: as the peer's card asks), read at call time; "" sends
	// none.
	KeyEnv                  string
	InputField, OutputField string
	Timeout                 time.Duration

	// a2a

	// CardURL is the agent card's http(s) URL or "env:NAME"; without a
	// path, the well-known card paths are asked.
	CardURL string
	// SkillID goes in the message's metadata; "" names none.
	SkillID string
}

// callA2A runs an agent of kind a2a (RegisterA2ACall); nil when the graph
// calls none.
var callA2A func(ctx context.Context, node string, a *Agent, task string) (string, error)

// RegisterA2ACall makes call run the agents of kind a2a (remote A2A
// agents): package svc.dev/runtime/a2a registers its client from its init,
// which a project whose graph calls A2A agents imports. call sends task to
// the agent a for the graph node node and returns the reply's text; its
// errors are the contract's (*Error: a 502 upstream_error naming the agent,
// or the node's configuration error). The agent's span (a remote agent's)
// and a streamed run's reply token are RunAgent's. Without it an agent of
// kind a2a fails as one of a kind this service cannot run.
func RegisterA2ACall(call func(ctx context.Context, node string, a *Agent, task string) (string, error)) {
	callA2A = call
}

// routeFinish is the decision that ends a supervisor's run.
const routeFinish = "finish"

// The agents of logical.agents and the tools they (and tool-calling llm
// nodes) may call, by registered name, as the project's agent_registry.go
// registers them.
var (
	registeredAgents map[string]*Agent
	registeredTools  map[string]AgentTool
)

// RegisterAgents makes these the agents and tools runs call: a project's
// agent_registry.go calls it once, from init.
func RegisterAgents(agents map[string]*Agent, tools map[string]AgentTool) {
	registeredAgents, registeredTools = agents, tools
}

// RunAgent is an agent node: it runs the agent name on task for a caller
// holding callerRoles (the node's static callerRoles). node is the graph
// node, named by the errors that are the node's rather than the agent's.
func RunAgent(ctx context.Context, node, name, task string, callerRoles []string) (string, error) {
	out, err := dispatchAgent(withReplies(ctx, node), node, name, task, callerRoles)
	return out, runCut(ctx, err)
}

func dispatchAgent(ctx context.Context, node, name, task string, callerRoles []string) (out string, err error) {
	a, ok := registeredAgents[name]
	if !ok {
		return "", nodeError(node, fmt.Sprintf("node %q failed: no agent is registered as %q", node, name))
	}
	if len(a.Roles) > 0 && !holdsAny(callerRoles, a.Roles) {
		held := append([]string(nil), callerRoles...)
		sort.Strings(held)
		holds := strings.Join(held, ", ")
		if holds == "" {
			holds = "none"
		}
		return "", agentError(name, "forbidden", fmt.Sprintf(`agent "%s" runs only for the roles %s; the caller holds %s`,
			name, strings.Join(a.Roles, ", "), holds))
	}
	op := SpanAgent
	if a.Kind == "remote" || a.Kind == "a2a" {
		op = SpanRemoteAgent
	}
	ctx, end := startSpan(ctx, op, name)
	defer func() { end(err) }()
	switch a.Kind {
	case "supervisor":
		return runSupervisor(ctx, node, a, task, callerRoles)
	case "remote":
		out, err := runRemote(ctx, node, a, task)
		if err == nil {
			// The peer's answer is not streamed: it is sent whole.
			repliesOf(ctx).token(out)
		}
		return out, err
	case "a2a":
		if callA2A == nil {
			break
		}
		out, err := callA2A(ctx, node, a, task)
		if err == nil {
			repliesOf(ctx).token(out)
		}
		return out, err
	case "worker", "":
		return runWorker(ctx, node, a.Name, a.Instructions, a.Tools, a.Model, a.MaxTurns, task)
	}
	return "", nodeError(node, fmt.Sprintf("node %q failed: agent %q has the kind %q, which this service cannot run", node, name, a.Kind))
}

// ToolLoop is an llm node with boundToolIds: a worker named after the node
// (name), without roles, whose system prompt is instructions.
func ToolLoop(ctx context.Context, name, instructions string, tools []string, m Model, maxTurns int, task string) (string, error) {
	out, err := runWorker(withReplies(ctx, name), name, name, instructions, tools, m, maxTurns, task)
	return out, runCut(ctx, err)
}

func holdsAny(held, allowed []string) bool {
	for _, h := range held {
		for _, a := range allowed {
			if h == a {
				return true
			}
		}
	}
	return false
}

// agentError is an agent's execution error: details name the agent (or
// the llm node) and the reason.
func agentError(name, reason, message string) *Error {
	e := nodeError(name, message)
	e.Details["reason"] = reason
	return e
}

// passThrough reports whether a tool's or a router's error ends the run
// as it is: an error of the contract, or the run's own end.
func passThrough(err error) bool {
	var e *Error
	return errors.As(err, &e) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// replies sends, in a streamed run, the text an agent node or a
// tool-calling llm node (node) may write: each token as it arrives, and
// tokens_discarded when the text sent turns out not to be what the node
// writes (docs/http-contract.md, "Agents and tool-calling llm nodes"). A
// nil *replies, a run that does not stream, sends nothing.
type replies struct {
	node    string
	observe Observer
	// standing: tokens were sent since the node started or since its last
	// tokens_discarded.
	standing bool
}

type repliesKey struct{}

// chatTurnStreamed is chatTurn for a streamed run, sending the reply's text
// to r; nil unless the graph streams (agents_stream.go).
var chatTurnStreamed func(ctx context.Context, name string, m Model, messages, tools []any, r *replies) (map[string]any, error)

// withReplies gives the agent run of node a replies when the run streams.
func withReplies(ctx context.Context, node string) context.Context {
	observe := observerOf(ctx)
	if observe == nil || chatTurnStreamed == nil {
		return ctx
	}
	return context.WithValue(ctx, repliesKey{}, &replies{node: node, observe: observe})
}

// repliesOf is the replies of the agent run ctx belongs to, or nil. It
// follows the observer: code that no longer sees it (muted, a subgraph's
// child) sends nothing.
func repliesOf(ctx context.Context) *replies {
	r, _ := ctx.Value(repliesKey{}).(*replies)
	if r == nil || observerOf(ctx) == nil {
		return nil
	}
	return r
}

// muted is ctx for code that a tool or a custom router runs: it sends no
// event, since an agent or a model call in it would send text the node
// does not write.
func muted(ctx context.Context) context.Context {
	if observerOf(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, observerKey{}, Observer(nil))
}

func (r *replies) token(delta string) {
	if r == nil || delta == "" {
		return
	}
	r.standing = true
	r.observe(Event{Type: "token", Node: r.node, Data: map[string]any{"delta": delta}})
}

// discard withdraws the tokens standing, if any (reason: tool_calls,
// next_member).
func (r *replies) discard(reason string) {
	if r == nil || !r.standing {
		return
	}
	r.standing = false
	r.observe(Event{Type: "tokens_discarded", Node: r.node, Data: map[string]any{"reason": reason}})
}

// chatTurn is one model call of a worker: streamed to the node's replies in
// a streamed run, else chatMessage. Either way it returns the reply's
// message.
func chatTurn(ctx context.Context, name string, m Model, messages, tools []any) (map[string]any, error) {
	if r := repliesOf(ctx); r != nil {
		return chatTurnStreamed(ctx, name, m, messages, tools, r)
	}
	return chatMessage(ctx, name, m, messages, tools, false)
}

// runWorker is the tool-calling loop: the model is called with the
// messages so far and the tools, at most maxTurns times; a reply without
// tool calls is the answer (its content, "" when that is not a string);
// otherwise the reply is echoed as an assistant message and every call
// runs, in order, its result going back as a tool message.
func runWorker(ctx context.Context, node, name, instructions string, tools []string, m Model, maxTurns int, task string) (string, error) {
	messages := []any{}
	if pyStrip(instructions) != "" {
		messages = append(messages, map[string]any{"role": "system", "content": instructions})
	}
	messages = append(messages, map[string]any{"role": "user", "content": task})
	specs := toolSpecs(tools)
	for turn := 0; turn < maxTurns; turn++ {
		// A client gone or the deadline passed: no further call (a native
		// tool may have run on without looking at ctx).
		if err := ctx.Err(); err != nil {
			return "", err
		}
		msg, err := chatTurn(ctx, name, m, messages, specs)
		if err != nil {
			return "", err
		}
		raw := msg["tool_calls"]
		if !pyTruthy(raw) {
			content, _ := msg["content"].(string)
			return content, nil
		}
		calls, err := toolCallList(node, raw)
		if err != nil {
			return "", err
		}
		messages = append(messages, map[string]any{"role": "assistant", "content": msg["content"], "tool_calls": raw})
		for _, call := range calls {
			if err := ctx.Err(); err != nil {
				return "", err
			}
			id, result, err := callAgentTool(ctx, node, name, tools, call)
			if err != nil {
				return "", err
			}
			messages = append(messages, map[string]any{"role": "tool", "tool_call_id": id, "content": result})
		}
	}
	return "", agentError(name, "max_turns",
		fmt.Sprintf(`agent "%s" did not answer within %d model calls (max_turns)`, name, maxTurns))
}

// toolSpecs are the tools offered to the model, in order: a function with
// the tool's name, its description ("" when none) and any JSON object as
// its parameters (an MCP tool: what its server listed).
func toolSpecs(tools []string) []any {
	specs := make([]any, 0, len(tools))
	for _, t := range tools {
		tool := registeredTools[t]
		description, parameters := tool.Description, map[string]any{"type": "object"}
		if tool.Listed != nil {
			listedDescription, schema := tool.Listed()
			if description == "" {
				description = listedDescription
			}
			if schema != nil {
				parameters = schema
			}
		}
		specs = append(specs, map[string]any{
			"type": "function",
			"function": map[string]any{
				"name":        t,
				"description": description,
				"parameters":  parameters,
			},
		})
	}
	return specs
}

// toolCallList is what Python iterates in `for call in tool_calls`: a
// list's items, an object's keys (sorted here), a string's characters;
// a number or a boolean cannot be iterated, which fails the node.
func toolCallList(node string, raw any) ([]any, error) {
	switch x := raw.(type) {
	case []any:
		return x, nil
	case map[string]any:
		keys := sortedKeys(x)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = k
		}
		return out, nil
	case string:
		out := []any{}
		for _, r := range x {
			out = append(out, string(r))
		}
		return out, nil
	}
	kind := "int"
	switch x := raw.(type) {
	case bool:
		kind = "bool"
	case float64:
		kind = "float"
	case fmt.Stringer:
		if strings.ContainsAny(x.String(), ".eE") {
			kind = "float"
		}
	}
	return nil, nodeError(node, fmt.Sprintf("node %q failed: TypeError: '%s' object is not iterable", node, kind))
}

// callAgentTool runs one tool call of the model and returns the call's id
// (echoed as it is) and the result's text: a string as it is, anything
// else as pyJSON.
func callAgentTool(ctx context.Context, node, agent string, tools []string, call any) (any, string, error) {
	obj, isObj := call.(map[string]any)
	id, hasID := obj["id"]
	fn, isFn := obj["function"].(map[string]any)
	nameValue, hasName := fn["name"]
	if !isObj || !hasID || !isFn || !hasName {
		return nil, "", agentError(agent, "bad_tool_call",
			fmt.Sprintf(`agent "%s": a malformed tool call %s`, agent, pyRepr(call)))
	}
	name, _ := nameValue.(string)
	known := false
	if _, isString := nameValue.(string); isString {
		for _, t := range tools {
			if t == name {
				known = true
				break
			}
		}
	}
	if !known {
		list := strings.Join(tools, ", ")
		if list == "" {
			list = "none"
		}
		return nil, "", agentError(agent, "bad_tool_call",
			fmt.Sprintf(`agent "%s" called "%s", which is not one of its tools (%s)`, agent, pyStr(nameValue), list))
	}
	raw := fn["arguments"]
	if !pyTruthy(raw) {
		raw = "{}"
	}
	arguments := raw
	if s, ok := raw.(string); ok {
		arguments = nil
		if v, err := decodeJSON(s); err == nil {
			arguments = v
		}
	}
	args, ok := arguments.(map[string]any)
	if !ok {
		return nil, "", agentError(agent, "bad_tool_call",
			fmt.Sprintf(`agent "%s": the arguments of "%s" are not a JSON object: %s`, agent, name, pyRepr(raw)))
	}
	tool, ok := registeredTools[name]
	if !ok || tool.Call == nil {
		return nil, "", nodeError(node, fmt.Sprintf("node %q failed: no tool is registered as %q", node, name))
	}
	spanCtx, end := startSpan(muted(ctx), SpanTool, name)
	result, err := runTool(spanCtx, tool, args)
	end(err)
	if err != nil {
		if passThrough(err) {
			return nil, "", err
		}
		return nil, "", agentError(agent, "tool_error", fmt.Sprintf(`agent "%s": tool "%s" failed: %v`, agent, name, err))
	}
	if s, ok := result.(string); ok {
		return id, s, nil
	}
	text, err := pyJSON(result)
	if err != nil {
		return nil, "", nodeError(node, fmt.Sprintf("node %q failed: %v", node, err))
	}
	return id, text, nil
}

// runTool calls the tool; a panic is the tool's failure, as an exception
// raised by a Python tool is.
func runTool(ctx context.Context, tool AgentTool, args map[string]any) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return tool.Call(ctx, args)
}

// runSupervisor routes between the members: each round the router (the
// custom body, else the model) names the member who acts next or finish.
// A member is given the task, followed, once a member has run, by a blank
// line and the last member's output; the answer is the last output when
// the router finishes.
func runSupervisor(ctx context.Context, node string, a *Agent, task string, callerRoles []string) (string, error) {
	lastMember, lastOutput, ran := "", "", false
	for round := 0; round < a.MaxRounds; round++ {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		var decision string
		if a.Route != nil {
			state := State{"input": task, "round": round, "last_member": lastMember, "last_output": lastOutput}
			d, err := a.Route(muted(ctx), state)
			if err != nil {
				if passThrough(err) {
					return "", err
				}
				return "", nodeError(node, fmt.Sprintf("node %q failed: %v", node, err))
			}
			decision = d
		} else {
			d, err := routeLLM(ctx, a, task, ran, lastMember, lastOutput)
			if err != nil {
				return "", err
			}
			decision = d
		}
		choice := pyLower(pyStrip(decision))
		if choice == routeFinish {
			return lastOutput, nil
		}
		member := ""
		for _, m := range a.Members {
			if pyLower(m) == choice {
				member = m
				break
			}
		}
		if member == "" {
			return "", agentError(a.Name, "bad_route", fmt.Sprintf(
				`supervisor "%s" routed to %s, which is neither one of its members (%s) nor '%s'`,
				a.Name, pyRepr(decision), strings.Join(a.Members, ", "), routeFinish))
		}
		given := task
		if ran {
			given = task + "\n\n" + lastOutput
		}
		// The last member's text, sent, is not the answer any more.
		repliesOf(ctx).discard("next_member")
		out, err := dispatchAgent(ctx, node, member, given, callerRoles)
		if err != nil {
			return "", err
		}
		lastMember, lastOutput, ran = member, out, true
	}
	return "", agentError(a.Name, "max_rounds", fmt.Sprintf(
		`supervisor "%s" did not finish within %d routing decisions (max_rounds)`, a.Name, a.MaxRounds))
}

// PrefixedRoute is the custom router of a supervisor in a subgraph: its body
// names members by their ids, while the registry holds them under the
// subgraph's prefix. The body sees last_member without the prefix, and a
// decision other than finish is stripped and given the prefix, as
// python-svc's wrapper does ("" becomes the prefix alone, a bad route).
func PrefixedRoute(prefix string, route func(context.Context, State) (string, error)) func(context.Context, State) (string, error) {
	return func(ctx context.Context, state State) (string, error) {
		view := state.clone()
		if last, ok := view["last_member"].(string); ok {
			view["last_member"] = strings.TrimPrefix(last, prefix)
		}
		d, err := route(ctx, view)
		if err != nil || pyLower(pyStrip(d)) == routeFinish {
			return d, err
		}
		return prefix + pyStrip(d), nil
	}
}

// routeLLM asks the model which member acts next. The system prompt is
// the instructions (when any), then "Answer with exactly one of these
// names:" and one line per member ("- <member>: <description>", or
// "- <member>") and "- finish: the task is done"; the user message is the
// task, followed, once a member has run, by "\n\n<member> answered:\n<its
// output>". A reply whose content is not a string is "".
func routeLLM(ctx context.Context, a *Agent, task string, ran bool, lastMember, lastOutput string) (string, error) {
	lines := []string{}
	if a.Instructions != "" {
		lines = append(lines, a.Instructions)
	}
	lines = append(lines, "Answer with exactly one of these names:")
	for _, m := range a.Members {
		description := ""
		if member, ok := registeredAgents[m]; ok {
			description = member.Description
		}
		if description != "" {
			lines = append(lines, "- "+m+": "+description)
		} else {
			lines = append(lines, "- "+m)
		}
	}
	lines = append(lines, "- "+routeFinish+": the task is done")
	user := task
	if ran {
		user += "\n\n" + lastMember + " answered:\n" + lastOutput
	}
	messages := []any{
		map[string]any{"role": "system", "content": strings.Join(lines, "\n")},
		map[string]any{"role": "user", "content": user},
	}
	msg, err := chatMessage(ctx, a.Name, a.Model, messages, nil, false)
	if err != nil {
		return "", err
	}
	content, _ := msg["content"].(string)
	return content, nil
}

// runRemote posts the task to another svc service: POST <url>/invoke with
// {"state": {<inputField>: task}} and the X-API-Key credential, bounded by
// the agent's timeout and the run's deadline; the output is
// result.<outputField>, a string as it is, anything else as pyJSON.
// Failures of the call are upstream errors naming the agent; a variable
// the agent needs that is unset or empty is a configuration error of the
// node (python-svc's ConfigError). The checks come in python-svc's order:
// the URL variable, the URL, the credential, the call.
func runRemote(ctx context.Context, node string, a *Agent, task string) (string, error) {
	if name, ok := strings.CutPrefix(a.URL, "env:"); ok && os.Getenv(name) == "" {
		return "", nodeError(node, fmt.Sprintf(
			`node %q failed: ConfigError: the URL of agent "%s" is not set: it reads the environment variable %s; set it in the environment`,
			node, a.Name, name))
	}
	base, err := resolveEndpoint(a.Name, a.URL)
	if err != nil {
		return "", err
	}
	headers := map[string]string{}
	if a.KeyEnv != "" {
		key := os.Getenv(a.KeyEnv)
		if key == "" {
			return "", nodeError(node, fmt.Sprintf(
				`node %q failed: ConfigError: the credential of agent "%s" is not set: it reads the environment variable %s; set it in the environment`,
				node, a.Name, a.KeyEnv))
		}
		headers["X-API-Key"] = key
	}
	// As python-svc's post_json, header values have their ${NAME} expanded.
	reply, err := postJSON(ctx, a.Name, strings.TrimRight(base, "/")+"/invoke", headers, a.Timeout,
		map[string]any{"state": map[string]any{a.InputField: task}})
	if err != nil {
		return "", err
	}
	obj, _ := reply.(map[string]any)
	result, _ := obj["result"].(map[string]any)
	output := result[a.OutputField]
	if output == nil {
		return "", UpstreamError(a.Name, ReasonInvalidJSON,
			fmt.Sprintf(`agent "%s": the reply has no result.%s`, a.Name, a.OutputField))
	}
	if s, ok := output.(string); ok {
		return s, nil
	}
	text, err := pyJSON(output)
	if err != nil {
		return "", nodeError(node, fmt.Sprintf("node %q failed: %v", node, err))
	}
	return text, nil
}
