"""Personas: @persona system prompts. Import each module here."""
