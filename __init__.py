"""dsh-policy: a policy-as-config governance gateway for AI agent harnesses.

Subpackages: ``core`` (the compact harness: plugin runtime, tool pipeline, agent loop),
``cmdline`` (what a shell line, interpreter code, SQL or a CLI's argv would do, read as text),
``policy`` (rule packs, CEL, the gateway plugins and the CLI), ``audit`` (the hash-chained log and
its verifier) and ``rules`` (the shipped rule packs).
"""

__version__ = "0.1.0"
