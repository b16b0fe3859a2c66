"""The HTTP face of a service: the HTTP contract (the repository's docs/http-contract.md).

- `app`: `create_app()` (also importable from here), `/invoke`, `/health`,
  `/info`, and `/mcp` and `/a2a` when there is something to serve there;
- `events`: the run events of `SVC_DEV_EVENTS=1`;
- `graph_server`: `@svc_graph_server`, the graphs of one class served together.

What the contract's three faces share (limits, JSON answers, request
bodies) is svc.contract.
"""

from __future__ import annotations

from svc.server.app import create_app

__all__ = ["create_app"]
