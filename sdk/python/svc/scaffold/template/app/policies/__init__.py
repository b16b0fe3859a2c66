"""Business policies: @business_policy rules. Import each module here."""
