"""Codex: how it reads a command hook's answer (:mod:`.dialect`), managed hooks through the system
``requirements.toml`` (:mod:`.managed`) and recording hook trust with Codex itself (:mod:`.trust`).

Empty on purpose: importing a module from here must not import its siblings."""
