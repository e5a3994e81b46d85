"""The hash-chained JSONL audit log and its verifier (AUDIT.md).

``audit`` imports nothing else of ``dsh_policy``: an auditor verifies a log without the policy
engine.
"""
