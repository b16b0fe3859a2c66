"""Guardrails: @input_guardrail / @output_guardrail checks. Import each module here."""
