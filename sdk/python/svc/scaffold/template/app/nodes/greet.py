"""A node: reads the state, returns the fields it changes."""

from app.state import State
from app.tools.word_count import word_count
from svc import graph_node


@graph_node("greet")
def greet(state: State) -> dict:
    name = state.get("name")
    if not name:
        said = [m["content"] for m in state.get("messages", []) if m.get("role") == "user"]
        name = said[-1] if said else "world"
    greeting = f"Hello, {name}!"
    return {
        "greeting": greeting,
        "words": word_count(greeting),
        "messages": [{"role": "assistant", "content": greeting}],
    }
