"""Claude Code and Codex command hooks: the protocol, one dialect per harness, the canonical tool
vocabulary and the hook audit records."""
