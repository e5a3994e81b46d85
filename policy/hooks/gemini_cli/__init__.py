"""Gemini CLI: how it names hook events and reads a command hook's answer (:mod:`.dialect`), and
the settings that wire it (:mod:`.settings`)."""
