"""A2A, the Agent2Agent protocol (the "a2a" extra: a2a-sdk 1.x, imported on first use).

The service as an A2A agent:

- `agent`: `@svc_a2a_server`, `@a2a_skill`, `@a2a_authenticator` and the
  `a2a` section of the config;
- `credentials`: who may call the agent, and `caller()`: who called, for
  the code a call runs;
- `skills`: what it answers, methods of the decorated class or the graph;
- `server`: the agent card and `POST /a2a`, for `create_app()`.

Calls to other A2A agents: `peers` (`invoke_a2a_agent`, `a2a_client`; an
A2A agent is declared with svc.agents' `@a2a_agent`).
"""

from svc.a2a.credentials import caller

__all__ = ["caller"]
