"""The entrypoint graph: greet, then end."""

from app.nodes.greet import greet
from app.state import State
from svc import END, GraphBuilder, graph


@graph("main", entrypoint=True)
def main_graph() -> GraphBuilder:
    builder = GraphBuilder(State)
    builder.add_node("greet", greet)
    builder.set_entry_point("greet")
    builder.add_edge("greet", END)
    return builder
