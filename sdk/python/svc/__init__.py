"""svc: the Python SDK of svc graph services.

Importing `svc` needs PyYAML only; every feature with an optional dependency
imports it when used and names the extra to install when it is missing.
"""

__version__ = "0.3.2"

from svc.agents import (
    agent,
    get_supervisor,
    handoff,
    make_handoff_tool,
    remote_agent,
    run_agent,
    supervisor,
    worker_agent,
)
from svc.clients import get_http_client, get_llm_provider
from svc.config import get_config, load_config
from svc.errors import (
    ConfigError,
    GuardrailViolation,
    MissingExtraError,
    RegistrationError,
    SvcError,
)
from svc.graph import END, START, GraphBuilder, SvcApp

# Records only: what its protocol needs is imported when the app is built.
from svc.graph_server import svc_graph_server
from svc.hitl import human_interrupt

# The MCP decorators only record; the "mcp" extra is imported when a server is built.
from svc.mcp_server import mcp_prompt, mcp_resource, mcp_tool, svc_mcp_server
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
from svc.tracing import configure_tracing, register_graph

# A2A (the "a2a" extra): imported on first use, so `import svc` loads neither
# svc.a2a_server nor svc.a2a_peers (which import the SDK only when called).
_LAZY = {
    "svc_a2a_server": "svc.a2a_server",
    "a2a_skill": "svc.a2a_server",
    "a2a_authenticator": "svc.a2a_server",
    "a2a_agent": "svc.a2a_peers",
    "a2a_client": "svc.a2a_peers",
    "invoke_a2a_agent": "svc.a2a_peers",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'svc' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


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
