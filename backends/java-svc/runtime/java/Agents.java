package dev.svc.runtime;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The agents of {@code logical.agents} and the tool-calling loop, with the
 * semantics of python-svc's svc.agents.run:
 *
 * <ul>
 * <li>a <b>worker</b> calls the model with its instructions, the task and the tools
 * it may call; every tool call runs and its result goes back to the model, until a
 * reply without tool calls (the answer) or {@code maxTurns} model calls
 * ({@code max_turns});</li>
 * <li>a <b>supervisor</b> routes the task between its members, by the model or by a
 * custom router, until it routes to {@code finish} (its answer is the last member's
 * output) or has made {@code maxRounds} decisions ({@code max_rounds}); each member
 * gets the task followed by the last member's output;</li>
 * <li>a <b>remote</b> agent is another svc service's {@code /invoke}.</li>
 * </ul>
 *
 * An agent with roles runs only for a caller holding one of them ({@code forbidden}).
 * Each run is isolated: only the final text comes back, nothing reaches the state.
 * Agent errors are 500 execution_error with {@code details.node} the agent's name and
 * {@code details.reason}; model and remote failures are 502 upstream_error naming the
 * agent, an HTTP tool's failure names the tool. The run thread is interrupted at the
 * run's deadline: InterruptedException always propagates.
 *
 * <p>In a streamed run a worker's turns stream through {@link LlmClient#chatTurn}
 * (the graph node's tokens), a supervisor withdraws them before its next member and
 * a remote agent's answer is sent whole; routing calls stay whole and send nothing.
 */
public final class Agents {
    /** The routing decision that ends a supervisor's run. */
    public static final String FINISH = "finish";
    /** An llm node's tool loop: python-svc's default max_turns. */
    public static final int DEFAULT_MAX_TURNS = 8;

    /** A tool an agent or a tool-calling llm node may call (native or HTTP). */
    @FunctionalInterface
    public interface ToolCall {
        Object call(Map<String, Object> args) throws Exception;
    }

    /**
     * A tool by its registered name; description "" when none. {@code parameters} gives the
     * JSON Schema of its arguments the model is offered (an MCP tool's input schema, as its
     * server lists it now).
     */
    public record Tool(String name, String description, ToolCall call, Supplier<Map<String, Object>> parameters) {
        /** A native or HTTP tool: its arguments are any object. */
        public Tool(String name, String description, ToolCall call) {
            this(name, description, call, () -> Values.map("type", "object"));
        }
    }

    /**
     * The custom router body: reads the read-only state map (input, round (Integer),
     * last_member, last_output: null before the first member ran) and returns a
     * member id or "finish".
     */
    @FunctionalInterface
    public interface Router {
        String route(Map<String, Object> state) throws Exception;
    }

    /**
     * The custom router of a supervisor in a subgraph (python-svc's route wrapper):
     * {@code body} names members by their ids, the registry holds them with the
     * subgraph's prefix. The body sees last_member without the prefix; a decision
     * that is null or "finish" passes unchanged, any other gets the prefix.
     */
    public static Router prefixed(String prefix, Router body) {
        return state -> {
            Map<String, Object> view = new LinkedHashMap<>(state);
            if (view.get("last_member") instanceof String last && last.startsWith(prefix)) {
                view.put("last_member", last.substring(prefix.length()));
            }
            String decision = body.route(Collections.unmodifiableMap(view));
            if (decision == null || FINISH.equals(PyJson.lower(PyJson.strip(decision)))) {
                return decision;
            }
            return prefix + PyJson.strip(decision);
        };
    }

    /** The kinds of agents. */
    public enum Kind {
        WORKER, SUPERVISOR, REMOTE, A2A
    }

    /**
     * One agent of logical.agents; built by {@link #worker}, {@link #supervisor}, {@link #remote}
     * and {@link #a2a}.
     */
    public static final class Agent {
        private final Kind kind;
        private final String name;
        private final String description;
        private final List<String> roles;
        private final String instructions;
        private final List<String> tools;
        private final LlmClient.Model model;
        private final int maxTurns;
        private final List<String> members;
        private final int maxRounds;
        private final Router router;
        private final String url;
        private final String keyEnv;
        private final String inputField;
        private final String outputField;
        private final long timeoutMs;
        private final String skillId;

        private Agent(Kind kind, String name, String description, List<String> roles, String instructions,
                List<String> tools, LlmClient.Model model, int maxTurns, List<String> members, int maxRounds,
                Router router, String url, String keyEnv, String inputField, String outputField, long timeoutMs,
                String skillId) {
            this.kind = kind;
            this.name = Objects.requireNonNull(name, "name");
            this.description = description == null ? "" : description;
            this.roles = roles == null ? List.of() : List.copyOf(roles);
            this.instructions = instructions == null ? "" : instructions;
            this.tools = tools == null ? List.of() : List.copyOf(tools);
            this.model = model;
            this.maxTurns = maxTurns;
            this.members = members == null ? List.of() : List.copyOf(members);
            this.maxRounds = maxRounds;
            this.router = router;
            this.url = url;
            this.keyEnv = keyEnv;
            this.inputField = inputField;
            this.outputField = outputField;
            this.timeoutMs = timeoutMs;
            this.skillId = skillId;
        }

        public Kind kind() {
            return kind;
        }

        public String name() {
            return name;
        }

        public String description() {
            return description;
        }

        public List<String> roles() {
            return roles;
        }

        public String instructions() {
            return instructions;
        }

        public List<String> tools() {
            return tools;
        }

        public List<String> members() {
            return members;
        }

        public int maxTurns() {
            return maxTurns;
        }

        public int maxRounds() {
            return maxRounds;
        }
    }

    /** A tool-calling worker; {@code instructions} is the system prompt ("" for none). */
    public static Agent worker(String name, String description, List<String> roles, String instructions,
            List<String> tools, LlmClient.Model model, int maxTurns) {
        return new Agent(Kind.WORKER, name, description, roles, instructions, tools, model, maxTurns, null, 0,
                null, null, null, null, null, 0, null);
    }

    /** A supervisor; {@code customOrNull} null routes with the model. */
    public static Agent supervisor(String name, String description, List<String> roles, String instructions,
            List<String> members, LlmClient.Model model, int maxRounds, Router customOrNull) {
        return new Agent(Kind.SUPERVISOR, name, description, roles, instructions, null, model, 0, members,
                maxRounds, customOrNull, null, null, null, null, 0, null);
    }

    /**
     * A remote agent: another svc service at {@code url} (a literal or env:NAME), its
     * API key in the environment variable {@code keyEnv}.
     */
    public static Agent remote(String name, String description, List<String> roles, String url, String keyEnv,
            String inputField, String outputField, long timeoutMs) {
        return new Agent(Kind.REMOTE, name, description, roles, "", null, null, 0, null, 0, null, url, keyEnv,
                inputField, outputField, timeoutMs, null);
    }

    /**
     * An A2A agent (A2aPeers): its card at {@code cardUrl} (a literal or env:NAME), its
     * credential in the variable {@code keyEnv} (null: none is sent), {@code skillId} (null:
     * none named) in the message's metadata.
     */
    public static Agent a2a(String name, String description, List<String> roles, String cardUrl, String keyEnv,
            String skillId, long timeoutMs) {
        return new Agent(Kind.A2A, name, description, roles, "", null, null, 0, null, 0, null, cardUrl, keyEnv,
                null, null, timeoutMs, skillId);
    }

    private final LlmClient llm;
    private final Map<String, Tool> tools = new LinkedHashMap<>();
    private final Map<String, Agent> agents = new LinkedHashMap<>();

    /**
     * The registry: every tool a worker names and every member of a supervisor must be
     * here, and supervisors must not form a cycle (the IR checks both; a generated
     * project that breaks them fails at start-up).
     */
    public Agents(LlmClient llm, List<Tool> tools, List<Agent> agents) {
        this.llm = llm;
        for (Tool t : tools) {
            this.tools.put(t.name(), t);
        }
        for (Agent a : agents) {
            this.agents.put(a.name(), a);
        }
        for (Agent a : agents) {
            for (String t : a.tools()) {
                if (!this.tools.containsKey(t)) {
                    throw new IllegalArgumentException("agent \"" + a.name() + "\" names the unknown tool \"" + t + "\"");
                }
            }
            for (String m : a.members()) {
                if (!this.agents.containsKey(m)) {
                    throw new IllegalArgumentException(
                            "supervisor \"" + a.name() + "\" names the unknown member \"" + m + "\"");
                }
            }
            checkMembers(a.name(), new ArrayList<>());
        }
    }

    private void checkMembers(String name, List<String> path) {
        int at = path.indexOf(name);
        if (at >= 0) {
            List<String> cycle = new ArrayList<>(path.subList(at, path.size()));
            cycle.add(name);
            throw new IllegalArgumentException("supervisors form a membership cycle: " + String.join(" -> ", cycle));
        }
        path.add(name);
        for (String m : agents.get(name).members()) {
            checkMembers(m, path);
        }
        path.remove(path.size() - 1);
    }

    /** The registered agent, or null. */
    public Agent agent(String name) {
        return agents.get(name);
    }

    // --- entry points ------------------------------------------------------------------------

    /**
     * The {@code agent} node {@code node} (python run_agent): runs the agent
     * {@code name} on {@code task} for a caller holding {@code callerRoles} and returns
     * its answer. Any failure that is not an SvcError (a custom router throwing, a
     * tool result JSON cannot hold, a missing remote credential) is an execution_error
     * naming the node, as a failing node is.
     */
    public String run(String node, String name, String task, List<String> callerRoles)
            throws SvcError, InterruptedException {
        List<String> held = callerRoles == null ? List.of() : List.copyOf(callerRoles);
        try {
            return runAgent(node, name, task, held);
        } catch (RuntimeException | StackOverflowError e) {
            throw failed(node, e);
        }
    }

    /**
     * An llm node with boundToolIds (python run_worker): the worker loop named
     * {@code name} (the node's id), with no roles held.
     */
    public String toolLoop(String name, String instructions, List<String> tools, LlmClient.Model model,
            int maxTurns, String task) throws SvcError, InterruptedException {
        for (String t : tools) {
            if (!this.tools.containsKey(t)) {
                throw SvcError.execution(name, "node \"" + name + "\" failed: LookupError: no tool named \""
                        + t + "\" is registered");
            }
        }
        Agent loop = worker(name, "", List.of(), instructions, tools, model, maxTurns);
        try {
            return runWorker(loop, task);
        } catch (RuntimeException | StackOverflowError e) {
            throw failed(name, e);
        }
    }

    /** A failure that is not an SvcError, as GraphRun reports a failing node. */
    private static SvcError failed(String node, Throwable e) {
        return SvcError.execution(node, "node \"" + node + "\" failed: " + e.getClass().getSimpleName()
                + (e.getMessage() == null ? "" : ": " + e.getMessage()));
    }

    /** An agent's execution_error with its reason. */
    private static SvcError agentError(String agent, String reason, String message) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("node", agent);
        details.put("reason", reason);
        return new SvcError(500, "execution_error", message, details);
    }

    private static void checkDeadline() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("the run passed its deadline");
        }
    }

    private String runAgent(String node, String name, String task, List<String> held)
            throws SvcError, InterruptedException {
        checkDeadline();
        Agent agent = agents.get(name);
        if (agent == null) {
            throw SvcError.execution(node, "node \"" + node + "\" failed: LookupError: no agent named \"" + name
                    + "\" is registered");
        }
        if (!agent.roles().isEmpty() && Collections.disjoint(new HashSet<>(held), agent.roles())) {
            String holds = String.join(", ", PyJson.sorted(held));
            throw agentError(name, "forbidden", "agent \"" + name + "\" runs only for the roles "
                    + String.join(", ", agent.roles()) + "; the caller holds " + (holds.isEmpty() ? "none" : holds));
        }
        Tracing.Op op = agent.kind() == Kind.REMOTE || agent.kind() == Kind.A2A
                ? Tracing.Op.REMOTE_AGENT : Tracing.Op.AGENT;
        try (Tracing.Span span = Tracing.start(op, name)) {
            try {
                return switch (agent.kind()) {
                    case SUPERVISOR -> runSupervisor(node, agent, task, held);
                    case REMOTE -> {
                        // The peer's answer is not streamed: in a streamed run it is sent whole.
                        String answer = runRemote(node, agent, task);
                        llm.wholeReply(answer);
                        yield answer;
                    }
                    case A2A -> {
                        String answer = A2aPeers.call(node, name, agent.url, agent.keyEnv, agent.skillId,
                                agent.timeoutMs, task);
                        llm.wholeReply(answer);
                        yield answer;
                    }
                    case WORKER -> runWorker(agent, task);
                };
            } catch (SvcError | InterruptedException | RuntimeException e) {
                span.fail(e);
                throw e;
            }
        }
    }

    // --- workers --------------------------------------------------------------------------------

    /** The tools JSON offered to the model, one entry per tool in order. */
    private List<Object> toolSpecs(Agent agent) {
        List<Object> specs = new ArrayList<>();
        for (String name : agent.tools()) {
            Tool tool = tools.get(name);
            Map<String, Object> function = new LinkedHashMap<>();
            function.put("name", name);
            function.put("description", tool.description() == null ? "" : tool.description());
            function.put("parameters", tool.parameters().get());
            specs.add(Values.map("type", "function", "function", function));
        }
        return specs;
    }

    private String runWorker(Agent agent, String task) throws SvcError, InterruptedException {
        String name = agent.name();
        if (agent.model == null) {
            throw agentError(name, "no_model", "agent \"" + name + "\" has no model: pass model= to @worker_agent");
        }
        List<Object> messages = new ArrayList<>();
        if (!PyJson.strip(agent.instructions()).isEmpty()) {
            messages.add(Values.map("role", "system", "content", agent.instructions()));
        }
        messages.add(Values.map("role", "user", "content", task));
        List<Object> specs = toolSpecs(agent);
        for (int turn = 0; turn < agent.maxTurns(); turn++) {
            checkDeadline();
            Map<String, Object> message = llm.chatTurn(name, agent.model, messages, specs);
            Object calls = message.get("tool_calls");
            if (!PyJson.truthy(calls)) {
                return message.get("content") instanceof String content ? content : "";
            }
            messages.add(Values.map("role", "assistant", "content", message.get("content"), "tool_calls", calls));
            for (Object call : iterate(calls)) {
                checkDeadline();
                messages.add(callTool(agent, call));
            }
        }
        throw agentError(name, "max_turns", "agent \"" + name + "\" did not answer within " + agent.maxTurns()
                + " model calls (max_turns)");
    }

    /** What Python's {@code for call in calls} walks: a list's items, a dict's keys, a str's characters. */
    private static List<Object> iterate(Object calls) {
        if (calls instanceof List<?> list) {
            return new ArrayList<>(list);
        }
        if (calls instanceof Map<?, ?> map) {
            return new ArrayList<>(map.keySet());
        }
        if (calls instanceof String s) {
            List<Object> chars = new ArrayList<>();
            s.codePoints().forEach(cp -> chars.add(new String(Character.toChars(cp))));
            return chars;
        }
        throw new PyJson.TypeError("'" + PyJson.typeName(calls) + "' object is not iterable");
    }

    /** Runs one tool call of the model (python _call_tool); returns the tool message. */
    private Map<String, Object> callTool(Agent agent, Object call) throws SvcError, InterruptedException {
        String a = agent.name();
        if (!(call instanceof Map<?, ?> c) || !c.containsKey("id") || !(c.get("function") instanceof Map<?, ?> fn)
                || !fn.containsKey("name")) {
            throw agentError(a, "bad_tool_call", "agent \"" + a + "\": a malformed tool call " + PyJson.repr(call));
        }
        Object id = c.get("id");
        Object name = fn.get("name");
        Object raw = fn.get("arguments");
        if (!PyJson.truthy(raw)) {
            raw = "{}";
        }
        if (!(name instanceof String toolName) || !agent.tools().contains(toolName)) {
            String offered = String.join(", ", agent.tools());
            throw agentError(a, "bad_tool_call", "agent \"" + a + "\" called \"" + PyJson.str(name)
                    + "\", which is not one of its tools (" + (offered.isEmpty() ? "none" : offered) + ")");
        }
        Object arguments;
        if (raw instanceof String text) {
            try {
                arguments = PyJson.loads(text);
            } catch (IOException e) {
                arguments = null;
            }
        } else {
            arguments = raw;
        }
        if (!(arguments instanceof Map<?, ?> args)) {
            throw agentError(a, "bad_tool_call", "agent \"" + a + "\": the arguments of \"" + toolName
                    + "\" are not a JSON object: " + PyJson.repr(raw));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> input = (Map<String, Object>) args;
        Object result;
        try (Tracing.Span span = Tracing.start(Tracing.Op.TOOL, toolName)) {
            try {
                result = tools.get(toolName).call().call(input);
            } catch (SvcError | InterruptedException e) {
                span.fail(e);
                throw e;
            } catch (Exception | StackOverflowError e) {
                SvcError failed = agentError(a, "tool_error", "agent \"" + a + "\": tool \"" + toolName
                        + "\" failed: " + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName()));
                span.fail(failed);
                throw failed;
            }
        }
        String text = result instanceof String s ? s : PyJson.dumps(result);
        return Values.map("role", "tool", "tool_call_id", id, "content", text);
    }

    // --- supervisors ------------------------------------------------------------------------------

    private String runSupervisor(String node, Agent sup, String task, List<String> held)
            throws SvcError, InterruptedException {
        String name = sup.name();
        List<String> members = sup.members();
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("input", task);
        state.put("round", 0);
        state.put("last_member", null);
        state.put("last_output", null);
        for (int round = 0; round < sup.maxRounds(); round++) {
            checkDeadline();
            state.put("round", round);
            String decision;
            if (sup.router != null) {
                try {
                    decision = sup.router.route(Collections.unmodifiableMap(new LinkedHashMap<>(state)));
                } catch (SvcError | InterruptedException e) {
                    throw e;
                } catch (Exception | StackOverflowError e) {
                    throw failed(node, e);
                }
            } else {
                decision = routeLlm(sup, task, state);
            }
            String choice = decision == null ? null : PyJson.lower(PyJson.strip(decision));
            String lastOutput = (String) state.get("last_output");
            if (FINISH.equals(choice)) {
                return lastOutput == null ? "" : lastOutput;
            }
            String member = null;
            for (String m : members) {
                if (PyJson.lower(m).equals(choice)) {
                    member = m;
                    break;
                }
            }
            if (member == null) {
                throw agentError(name, "bad_route", "supervisor \"" + name + "\" routed to " + PyJson.repr(decision)
                        + ", which is neither one of its members (" + String.join(", ", members) + ") nor 'finish'");
            }
            String given = lastOutput == null ? task : task + "\n\n" + lastOutput;
            // In a streamed run the last member's text, sent, is not the answer any more.
            llm.discardReplies("next_member");
            state.put("last_output", runAgent(node, member, given, held));
            state.put("last_member", member);
        }
        throw agentError(name, "max_rounds", "supervisor \"" + name + "\" did not finish within " + sup.maxRounds()
                + " routing decisions (max_rounds)");
    }

    /** The llm router (python _route_llm): the reply's content, or "" when it has none. */
    private String routeLlm(Agent sup, String task, Map<String, Object> state) throws SvcError, InterruptedException {
        String name = sup.name();
        if (sup.model == null) {
            throw agentError(name, "no_model", "supervisor \"" + name + "\" has no model: pass model= to @supervisor");
        }
        List<String> lines = new ArrayList<>();
        if (!sup.instructions().isEmpty()) {
            lines.add(sup.instructions());
        }
        lines.add("Answer with exactly one of these names:");
        for (String m : sup.members()) {
            String description = agents.get(m).description();
            lines.add(description.isEmpty() ? "- " + m : "- " + m + ": " + description);
        }
        lines.add("- " + FINISH + ": the task is done");
        String user = task;
        if (state.get("last_member") != null) {
            user += "\n\n" + state.get("last_member") + " answered:\n" + state.get("last_output");
        }
        List<Object> messages = new ArrayList<>();
        messages.add(Values.map("role", "system", "content", String.join("\n", lines)));
        messages.add(Values.map("role", "user", "content", user));
        Object content = llm.chatMessage(name, sup.model, messages, List.of()).get("content");
        return content instanceof String s ? s : "";
    }

    // --- remote agents ------------------------------------------------------------------------------

    /**
     * POSTs {"state": {inputField: task}} to {@code <url>/invoke} with the X-API-Key
     * header and returns {@code result[outputField]} (non-text values as Python's
     * json.dumps writes them).
     */
    private String runRemote(String node, Agent agent, String task) throws SvcError, InterruptedException {
        String name = agent.name();
        // python-svc reads the service's URL and key from its configuration: one
        // that is not set is a ConfigError, a failure of the node.
        if (agent.url == null || agent.url.isEmpty()
                || agent.url.startsWith("env:") && EnvFile.get(agent.url.substring(4)).isEmpty()) {
            String variable = agent.url == null || !agent.url.startsWith("env:") ? null : agent.url.substring(4);
            throw SvcError.execution(node, "node \"" + node + "\" failed: ConfigError: the URL of agent \"" + name
                    + "\" is not set" + (variable == null ? "" : ": it reads the environment variable " + variable
                            + "; set it in the environment or env.yaml"));
        }
        URI base = Upstream.resolveUrl(name, "upstream", agent.url, null);
        String key = agent.keyEnv == null ? "" : EnvFile.get(agent.keyEnv);
        if (key.isEmpty()) {
            throw SvcError.execution(node, "node \"" + node + "\" failed: ConfigError: the API key of agent \"" + name
                    + "\" is not set: it reads the environment variable " + agent.keyEnv
                    + "; set it in the environment or env.yaml");
        }
        URI endpoint = Upstream.endpoint(name, base.toString().replaceAll("/+$", "") + "/invoke");
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("X-API-Key", Upstream.expandEnv(key));
        Map<String, Object> body = Values.map("state", Values.map(agent.inputField, task));
        Object reply = Upstream.post(name, "upstream", endpoint, headers, Duration.ofMillis(agent.timeoutMs), body,
                true);
        Object result = reply instanceof Map<?, ?> r ? r.get("result") : null;
        Object output = result instanceof Map<?, ?> m ? m.get(agent.outputField) : null;
        if (output == null) {
            throw SvcError.upstream(name, "invalid_json",
                    "agent \"" + name + "\": the reply has no result." + agent.outputField, null);
        }
        return output instanceof String s ? s : PyJson.dumps(output);
    }
}
