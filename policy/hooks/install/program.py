"""The ``dsh-policy`` program a hook command names, found and proven by running it.

Hook commands name the program by absolute path: a client's PATH is not the shell's (a venv is
rarely on it), and for a machine-wide hook the user's PATH must not choose the guard. ``init``
runs the program it is about to write (``--version``) and refuses to write a command that does not
answer, so a set-up never starts out refusing every call.
"""

from __future__ import annotations

import subprocess

from dsh_policy.policy.hooks.codex.managed import dsh_policy_program

CHECK_SECONDS = 60.0


def checked_program() -> tuple[str | None, str]:
    """(the absolute path of this installation's ``dsh-policy``, what running it said), or
    (None, why not)."""
    program = dsh_policy_program()
    if program is None:
        return None, "cannot find this installation's `dsh-policy` command (install the package first)"
    try:
        done = subprocess.run(
            [program, "--version"], capture_output=True, text=True, timeout=CHECK_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"{program} does not run: {error}"
    said = done.stdout.strip()
    if done.returncode != 0 or not said.startswith("dsh-policy "):
        detail = (done.stderr.strip() or said or "(nothing)").splitlines()[-1][:200]
        return None, f"{program} --version failed (exit {done.returncode}): {detail}"
    return program, said
