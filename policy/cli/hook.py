"""``dsh-policy hook`` decided in this process: thin entry points over
:mod:`dsh_policy.policy.hooks.in_process.adapter`, where the in-process hook now lives.

Kept for one release; import from ``dsh_policy.policy.hooks.in_process.adapter``. (The command
itself runs the fast client, :mod:`dsh_policy.policy.hooks.gateway.client`, which calls the
adapter when no resident gateway answers.)
"""

from __future__ import annotations

from collections.abc import Mapping

from dsh_policy.policy.hooks.in_process import adapter


def main(argv: list[str], *, delivery: Mapping[str, str] | None = None) -> int:
    """Decide one event in this process (see :func:`.adapter.main`); returns 0 or 2."""
    return adapter.main(argv, delivery=delivery)


def process_main(
    argv: list[str], *, delivery: Mapping[str, str] | None = None, seconds: float | None = None
) -> int:
    """Decide one event in a watched child process (see :func:`.adapter.process_main`)."""
    return adapter.process_main(argv, delivery=delivery, seconds=seconds)
