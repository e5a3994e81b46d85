"""``dsh-policy data``: the data the command-line readers decide with, shown and refreshed.

Two files ship beside the readers: the known-malicious package snapshot (OSV advisories) and the
list of most-used package names the look-alike reader compares installs against. Each names its
sources and date in a header line, and that identity is part of every policy digest, so an audit
record names the data it was decided with. A refresh rewrites a file from sources the caller
fetched (checkouts, exports): nothing is downloaded here, so a refresh is reviewable. A running
gateway keeps the data it loaded; restart it (or reload the policy) to decide with the new file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

USAGE = """usage: dsh-policy data show
       dsh-policy data refresh-malicious SOURCE [SOURCE ...] [--out PATH] [--date D] [--note TEXT]
       dsh-policy data refresh-popular --pypi TOP_PYPI --npm NPM_HIGH_IMPACT [--go AWESOME_GO_README]
                                       [--out PATH] [--date D] [--note TEXT]

show               each shipped data file: path, sources, snapshot date, size
refresh-malicious  rebuild the known-malicious package snapshot from OSV records (a checkout of
                   ossf/malicious-packages and of the general advisory databases, or osv.dev
                   all.zip exports)
refresh-popular    rebuild the most-used package names from hugovk/top-pypi-packages, a
                   checkout of wooorm/npm-high-impact and avelino/awesome-go's README (Go)
"""


def _show() -> int:
    from dsh_policy.cmdline.effects import lookalikes, packages

    for label, path in (("malicious packages", packages.DATA), ("popular packages", lookalikes.DATA)):
        try:
            with path.open(encoding="utf-8") as handle:
                header = json.loads(handle.readline())
        except FileNotFoundError:
            print(f"{label}: {path}: missing (the reader finds nothing)")
            continue
        except ValueError as error:
            print(f"{label}: {path}: unreadable header ({error})")
            return 1
        size = Path(path).stat().st_size
        print(f"{label}: {path} ({size:,} bytes)")
        print(f"  source:   {header.get('source', '')}")
        print(f"  snapshot: {header.get('snapshot', '')}")
        print(f"  scope:    {header.get('scope', '')}")
    return 0


def main(argv: list[str]) -> int:
    """Dispatch ``show``, ``refresh-malicious`` and ``refresh-popular``."""
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "show":
        return _show()
    if command == "refresh-malicious":
        from dsh_policy.cmdline.effects import malicious_refresh

        return malicious_refresh.main(rest, prog="dsh-policy data refresh-malicious")
    if command == "refresh-popular":
        from dsh_policy.cmdline.effects import popular_refresh

        return popular_refresh.main(rest, prog="dsh-policy data refresh-popular")
    print(f"dsh-policy data: unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
    return 2
