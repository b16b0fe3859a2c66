"""Agents: delegatable sub-agents. Import each module here."""
