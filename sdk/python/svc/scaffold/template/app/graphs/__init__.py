from . import main_graph  # noqa: F401
