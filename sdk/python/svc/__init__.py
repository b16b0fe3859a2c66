"""svc: the Python SDK of svc graph services.

Importing `svc` needs PyYAML only; every feature with an optional dependency
imports it when used and names the extra to install when it is missing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# What every service loads at start-up anyway. svc.registry comes after
# svc.graph, so `svc.graph` is the decorator, not the module.
from svc.config import get_config, load_config
from svc.errors import (
    ConfigError,
    GuardrailViolation,
    MissingExtraError,
    RegistrationError,
    SvcError,
)
from svc.graph import END, START, GraphBuilder
from svc.project import SvcApp
from svc.registry import (
    Decision,
    business_policy,
    components,
    configuration,
    evaluate_policies,
    get_configuration,
    graph,
    graph_node,
    input_guardrail,
    output_guardrail,
    persona,
    persona_prompt,
    skill,
    tool,
)
from svc.version import __version__

# The rest is imported from its module on first use (PEP 562), so a service
# does not pay at start-up for agents, MCP, A2A or tracing it does not use.
_EXPORTS = {
    "a2a_agent": "svc.agents",
    "agent": "svc.agents",
    "get_supervisor": "svc.agents",
    "handoff": "svc.agents",
    "make_handoff_tool": "svc.agents",
    "remote_agent": "svc.agents",
    "run_agent": "svc.agents",
    "supervisor": "svc.agents",
    "worker_agent": "svc.agents",
    "get_http_client": "svc.config.services",
    "get_llm_provider": "svc.config.services",
    "svc_graph_server": "svc.server.graph_server",
    "human_interrupt": "svc.threads.hitl",
    "mcp_prompt": "svc.mcp.server",
    "mcp_resource": "svc.mcp.server",
    "mcp_tool": "svc.mcp.server",
    "svc_mcp_server": "svc.mcp.server",
    "configure_tracing": "svc.tracing",
    "register_graph": "svc.tracing",
    "svc_a2a_server": "svc.a2a.agent",
    "a2a_skill": "svc.a2a.agent",
    "a2a_authenticator": "svc.a2a.agent",
    "a2a_client": "svc.a2a.peers",
    "invoke_a2a_agent": "svc.a2a.peers",
}

if TYPE_CHECKING:  # what editors and type checkers see
    from svc.a2a.agent import (
        a2a_authenticator,
        a2a_skill,
        svc_a2a_server,
    )
    from svc.a2a.peers import (
        a2a_client,
        invoke_a2a_agent,
    )
    from svc.agents import (
        a2a_agent,
        agent,
        get_supervisor,
        handoff,
        make_handoff_tool,
        remote_agent,
        run_agent,
        supervisor,
        worker_agent,
    )
    from svc.config.services import (
        get_http_client,
        get_llm_provider,
    )
    from svc.mcp.server import (
        mcp_prompt,
        mcp_resource,
        mcp_tool,
        svc_mcp_server,
    )
    from svc.server.graph_server import (
        svc_graph_server,
    )
    from svc.threads.hitl import (
        human_interrupt,
    )
    from svc.tracing import (
        configure_tracing,
        register_graph,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'svc' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


__all__ = [
    "END",
    "START",
    "ConfigError",
    "Decision",
    "GraphBuilder",
    "GuardrailViolation",
    "MissingExtraError",
    "RegistrationError",
    "SvcApp",
    "SvcError",
    "__version__",
    "a2a_agent",
    "a2a_authenticator",
    "a2a_client",
    "a2a_skill",
    "agent",
    "business_policy",
    "components",
    "configuration",
    "configure_tracing",
    "evaluate_policies",
    "get_config",
    "get_configuration",
    "get_http_client",
    "get_llm_provider",
    "get_supervisor",
    "graph",
    "graph_node",
    "handoff",
    "human_interrupt",
    "input_guardrail",
    "invoke_a2a_agent",
    "load_config",
    "make_handoff_tool",
    "mcp_prompt",
    "mcp_resource",
    "mcp_tool",
    "output_guardrail",
    "persona",
    "persona_prompt",
    "register_graph",
    "remote_agent",
    "run_agent",
    "skill",
    "supervisor",
    "svc_a2a_server",
    "svc_graph_server",
    "svc_mcp_server",
    "tool",
    "worker_agent",
]
