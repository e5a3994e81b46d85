"""The demo: an in-memory sandbox, demo tools in the canonical vocabulary, scripted sessions."""
