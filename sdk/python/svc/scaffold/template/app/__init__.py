"""The application package: importing it registers every component.

Each subpackage imports its own modules; a module that is not imported here
(directly or through its package) does not register anything.
"""

from . import (  # noqa: F401
    agents,
    config,
    graphs,
    guardrails,
    mcp,
    nodes,
    personas,
    policies,
    skills,
    state,
    tools,
)
