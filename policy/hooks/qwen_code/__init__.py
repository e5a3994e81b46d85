"""Qwen Code: how it reads a command hook's answer (:mod:`.dialect`)."""
