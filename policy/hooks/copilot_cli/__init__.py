"""GitHub Copilot CLI: how it reads a command hook's answer (:mod:`.dialect`) and the hook file
``init copilot-cli`` writes (:mod:`.hooks_file`)."""
