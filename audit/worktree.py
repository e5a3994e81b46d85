"""Is a file about to be committed by accident? (``keygen`` asks it of the private key.)

A private key written inside a git work tree and not ignored is one ``git add .`` away from a
repository, where every clone can then forge checkpoints. Git itself answers whether a path is
ignored (``git check-ignore``, which knows every ignore source); without git, or when it fails, the
file counts as not ignored: a needless warning beats a missed one.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def enclosing_work_tree(path: Path) -> Path | None:
    """The root of the git work tree that holds ``path`` (a ``.git`` folder or file above it)."""
    for folder in (path.resolve().parent, *path.resolve().parent.parents):
        if (folder / ".git").exists():
            return folder
    return None


def unignored_in_work_tree(path: Path) -> Path | None:
    """The work tree's root when ``path`` lies in one and git would not ignore it; else None."""
    root = enclosing_work_tree(path)
    if root is None:
        return None
    git = shutil.which("git")
    if git is None:
        return root
    try:
        answer = subprocess.run(
            [git, "-C", str(root), "check-ignore", "-q", "--", str(path.resolve())],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return root
    return None if answer.returncode == 0 else root
