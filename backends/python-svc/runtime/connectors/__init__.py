"""Code of the marketplace connectors the graph uses."""
