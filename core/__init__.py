"""The compact harness: plugin runtime, tool pipeline and agent loop (HARNESS.md).

``core`` imports nothing else of ``dsh_policy``; the gateway is a handful of ordinary plugins on its
public seams.
"""
