"""MCP servers and tools. Import each module here."""
