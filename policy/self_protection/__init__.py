"""Self-protection: the agent a gateway guards may not switch that gateway off.

A deployment knows what keeps it in force: the packs it loaded, its deployment file, its audit log,
its signing key, the hook settings of the harnesses it guards and the installed package itself.
:func:`protection_for` derives that set from the deployment, and :meth:`SelfProtection.check` is a
hard guard-level invariant over every tool call: writes, edits, patches, moves, deletes,
truncations, permission changes and redirections into a protected path are refused, through the
shell (read with ``dsh_policy.cmdline.shell``, so ``sudo``, ``bash -c``, quoting and variables are seen
through), the file tools, ``apply_patch`` and any other tool whose arguments name a protected path;
so are uninstalling or shadowing the gateway (``pip uninstall dsh-policy``, a ``sitecustomize.py``
or ``.pth`` shim, an exported ``PYTHONPATH``) and starting a harness with its hooks disabled.
Reading packs and settings stays allowed; reading the signing key does not.

It is not a rule in a pack, so no pack edit, ``shadow: true`` or mode can weaken it: only the
deployment file (``self_protection: {enabled: false}``, a file the agent's tools are denied) or the
operator's own command line turns it off, and the digest and audit records then say so.

What it cannot see is stated in the README's threat model: code an interpreter runs from a file,
encoded paths, and anything done with the same OS user outside the guarded tools.

The package: :mod:`.locations` (which paths and names are protected, and where a deployment's
harness, package and runtime files are), :mod:`.protection` (the protected set of one deployment
and its check), :mod:`.scan` (reading one call, its shell line included, for tampering; paths
judged where links and letter case lead), :mod:`.tactics` (techniques judged over a whole call:
the options that write, copies of the key's folders, nested agents and MCP entries, the gateway's
process and disk), :mod:`.agents` (harness starts, agents with no hooks of ours, MCP server
entries), :mod:`.processes` (the live gateway's processes, signal senders, environment overrides,
disk filling), :mod:`.inline` and :mod:`.code_literals` (interpreter code: its effects, and the
paths and processes its literals name), :mod:`.gateway_commands` (installers, shadows and the
gateway's own commands), :mod:`.vcs` and :mod:`.patches` (git moves, applied changes, patches),
:mod:`.later`, :mod:`.sessions` and :mod:`.staged` (environment for later sessions, files that run
later, schedulers), :mod:`.streams` (what one command hands another) and :mod:`.refusals` (the
pseudo-rule ids and messages). What programs do (which only read, which act
on whole folders) is the readers' shared table, :mod:`dsh_policy.cmdline.programs`.
"""

from __future__ import annotations

from dsh_policy.policy.self_protection.locations import Kind, Protected
from dsh_policy.policy.self_protection.protection import SelfProtection, protection_for
from dsh_policy.policy.self_protection.refusals import MAX_CHECKED_WORDS, RULE_PREFIX, Refusal

__all__ = [
    "MAX_CHECKED_WORDS",
    "RULE_PREFIX",
    "Kind",
    "Protected",
    "Refusal",
    "SelfProtection",
    "protection_for",
]
