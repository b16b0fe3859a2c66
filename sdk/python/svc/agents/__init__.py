"""Agents: tool-calling workers on an OpenAI-compatible chat-completions API,
supervisors routing between them, and agents elsewhere (another svc
service's `/invoke`, or any Agent2Agent agent).

A worker is a loop: the model sees the agent's instructions, the caller's
input and the tools it may call; every tool call it makes runs and its result
goes back to it, until it answers without tool calls (the agent's output) or
has been called `max_turns` times. `run_agent` runs any of them in an
isolated child scope and returns only the final answer, gated by the
agent's `roles` (and each tool's) and the business policies.

- `decorators`: `@worker_agent`, `@agent(transport="local"|"remote"|"a2a")`,
  `@a2a_agent`, `@supervisor`, `make_handoff_tool`, `handoff`, `agents_info`;
- `run`: `Worker` and `run_worker` (what generated code calls), `run_agent`,
  `get_supervisor`, `remote_agent`, `tool_schema`.

A2A agents are called through svc.a2a.peers.
"""

from __future__ import annotations

from svc.agents.decorators import (
    DEFAULT_MAX_ROUNDS,
    DEFAULT_MAX_TURNS,
    DEFAULT_REMOTE_TIMEOUT_MS,
    FINISH,
    PERSONA_KEYS,
    ROUTERS,
    TRANSPORTS,
    Transfer,
    a2a_agent,
    agent,
    agents_info,
    handoff,
    make_handoff_tool,
    supervisor,
    worker_agent,
)
from svc.agents.run import (
    RemoteAgent,
    SupervisorHandle,
    Team,
    Worker,
    agent_error,
    get_supervisor,
    remote_agent,
    run_agent,
    run_remote,
    run_supervisor,
    run_worker,
    tool_schema,
    worker,
)

__all__ = [
    "DEFAULT_MAX_ROUNDS",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_REMOTE_TIMEOUT_MS",
    "FINISH",
    "PERSONA_KEYS",
    "ROUTERS",
    "TRANSPORTS",
    "RemoteAgent",
    "SupervisorHandle",
    "Team",
    "Transfer",
    "Worker",
    "a2a_agent",
    "agent",
    "agent_error",
    "agents_info",
    "get_supervisor",
    "handoff",
    "make_handoff_tool",
    "remote_agent",
    "run_agent",
    "run_remote",
    "run_supervisor",
    "run_worker",
    "supervisor",
    "tool_schema",
    "worker",
    "worker_agent",
]
