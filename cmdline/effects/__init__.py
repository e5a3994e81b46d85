"""Effects: what a command or a file write *does* (schedules code to run later, changes trust,
identity or defences, talks to the network), derived from the readers' output so that rules judge
the effect and not the spelling.

Modules: ``later`` (files that run later: :func:`later_class`, :func:`later_risks`; with
``infra_files`` for what infrastructure code grants) and ``acts`` (a shell line's effects on trust,
identity, defences and the network: :func:`shell_acts`), which gathers the tables of ``host``,
``channels``, ``packages``, ``code_sources`` (installs from a repository or URL instead of the
registry), ``escape`` (container escapes, attacker tooling, defences removed
through their own tools), ``cloud_more`` (control-plane techniques outside the common verbs) and
``reach`` (other machines, the user's input, routing, root through the loader, control-plane pods).
"""

from dsh_policy.cmdline.effects.acts import KINDS, shell_acts
from dsh_policy.cmdline.effects.later import ALWAYS, later_class, later_risks

__all__ = ["ALWAYS", "KINDS", "later_class", "later_risks", "shell_acts"]
