"""Skills: @skill capabilities built from tools. Import each module here."""
