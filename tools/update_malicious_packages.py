"""Rebuild the shipped known-malicious package list from OSV malicious-package advisories.

Usage::

    python tools/update_malicious_packages.py SOURCE [SOURCE ...] [--out PATH] [--date YYYY-MM-DD]

Each SOURCE is a folder searched recursively for OSV JSON records (a checkout of
github.com/ossf/malicious-packages, whose records live under ``osv/malicious/<ecosystem>/``, or
``tools/osv-supplement``, advisories read one by one after the checkout was taken) or a ``.zip``
of OSV records (osv.dev's per-ecosystem ``all.zip`` exports; only ``MAL-`` records are kept).
Everything is read offline from what is given: getting the records is the caller's step (``git
clone``, a download), so the refresh is reviewable and repeatable.

The output (default: ``cmdline/effects/malicious_packages.json``) is what
``dsh_policy.cmdline.effects.packages`` reads, in JSON lines so the header is read alone (the
policy digest names the snapshot without parsing tens of thousands of names): line 1 the header
(``format`` 2, ``source``, ``snapshot`` date, ``scope``: each source with its newest record's date
and count), then one line per ecosystem, ``{"ecosystem": ..., "packages": {name: entry}}``, names
normalized the way the ecosystem compares them. An entry is the advisory id alone (a string) when
every version is malicious, else ``{"id", "versions"?, "ranges"?}``. One id per package (the
feed's own ``MAL-YYYY-`` id first): a verdict names one advisory, and every further id would
only grow the file. Withdrawn records are dropped. The snapshot date is the newest ``modified``
time among the records kept, or ``--date``.

One reading needs saying: the feed merges several sources' reports, and a first report of "every
version" (a bare ``introduced: 0`` range) is sometimes narrowed later by another range in the same
record. Such a record counts only its bounded ranges; a record whose only range is unbounded, or
whose listed versions come with an unbounded range in its origins and no bounded one, covers every
version.
"""

from __future__ import annotations

import argparse
import json
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dsh_policy.cmdline.effects.packages import normalize

ROOT = Path(__file__).resolve().parents[1]

DEFAULT_OUT = ROOT / "cmdline" / "effects" / "malicious_packages.json"
ECOSYSTEMS = {"npm": "npm", "PyPI": "pypi", "RubyGems": "rubygems", "crates.io": "crates", "Go": "go"}
"""OSV ecosystem names to the keys the readers use; other ecosystems are not installed by the
commands the readers know and are skipped."""


def records(source: Path) -> Iterator[dict[str, Any]]:
    """Every OSV record in a folder (recursively) or a zip archive."""
    if source.suffix == ".zip":
        with zipfile.ZipFile(source) as archive:
            for name in archive.namelist():
                if name.endswith(".json"):
                    yield json.loads(archive.read(name))
        return
    for path in sorted(source.rglob("*.json")):
        if not path.is_file():  # the feed has package folders named like "x.json"
            continue
        try:
            yield json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            print(f"skipped {path}: {error}", file=sys.stderr)


def _bounded(span: dict[str, Any]) -> dict[str, str] | None:
    """A range's bounds, or None for the unbounded ``introduced: 0``."""
    bounds: dict[str, str] = {}
    for event in span.get("events", ()):
        for key in ("introduced", "fixed", "last_affected"):
            if key in event:
                bounds[key] = str(event[key])
    if bounds.get("introduced", "0") in ("0", "") and len(bounds) <= 1:
        return None
    return bounds


def _origins_say_all(record: dict[str, Any]) -> bool:
    origins = (record.get("database_specific") or {}).get("malicious-packages-origins") or []
    return any(
        _bounded(span) is None
        for origin in origins
        for span in origin.get("ranges", ())
        if span.get("events")
    )


def merge(into: dict[str, dict[str, Any]], record: dict[str, Any]) -> bool:
    """Add one record's affected packages to ``into`` (ecosystem -> name -> entry); False for a
    record that is no live malicious-package advisory (not ``MAL-``, or withdrawn)."""
    ident = str(record.get("id", ""))
    if not ident.startswith("MAL-") or record.get("withdrawn"):
        return False
    for affected in record.get("affected", ()):
        package = affected.get("package", {})
        ecosystem = ECOSYSTEMS.get(package.get("ecosystem", ""))
        if ecosystem is None or not package.get("name"):
            continue
        spans = affected.get("ranges", ())
        bounded = [b for span in spans if (b := _bounded(span)) is not None]
        unbounded = any(_bounded(span) is None for span in spans)
        versions = [str(v) for v in affected.get("versions", ())]
        every = (unbounded and not bounded) or (not bounded and not versions and not spans)
        if versions and not spans and not bounded:
            every = every or _origins_say_all(record)
        entry = into.setdefault(ecosystem, {}).setdefault(normalize(ecosystem, package["name"]), {"ids": []})
        if ident not in entry["ids"]:
            entry["ids"].append(ident)
        if versions:
            entry["versions"] = sorted(set(entry.get("versions", [])) | set(versions))
        if bounded:
            entry["ranges"] = entry.get("ranges", []) + [
                b for b in bounded if b not in entry.get("ranges", [])
            ]
        if every:
            entry["all"] = True
    return True


def _compact(entry: dict[str, Any]) -> str | dict[str, Any]:
    """The shipped form of one merged entry: its first id alone when every version is malicious."""
    ident = sorted(entry["ids"], key=lambda i: (i.startswith("MAL-0000"), i))[0]
    if entry.get("all"):
        return ident
    return {"id": ident, **{k: entry[k] for k in ("versions", "ranges") if k in entry}}


def build(sources: list[Path], date: str | None) -> dict[str, Any]:
    """The header and the compact packages of every source, merged."""
    packages: dict[str, dict[str, Any]] = {}
    read: list[str] = []
    newest_all = ""
    for source in sources:
        newest, kept = "", 0
        for record in records(source):
            if merge(packages, record):
                newest = max(newest, str(record.get("modified", ""))[:10])
                kept += 1
        read.append(f"{source.name} ({kept} records, newest {newest or 'none'})")
        newest_all = max(newest_all, newest)
    return {
        "format": 2,
        "source": "ossf/malicious-packages osv/malicious (OSV MAL- advisories)",
        "snapshot": date or newest_all,
        "scope": "; ".join(read),
        "packages": {
            eco: {name: _compact(entry) for name, entry in sorted(names.items())}
            for eco, names in sorted(packages.items())
        },
    }


def dump(data: dict[str, Any]) -> str:
    """JSON lines: the header, then one compact line per ecosystem."""
    header = {k: v for k, v in data.items() if k != "packages"}
    lines = [json.dumps(header, ensure_ascii=False)]
    lines += [
        json.dumps({"ecosystem": eco, "packages": names}, ensure_ascii=False, separators=(",", ":"))
        for eco, names in data["packages"].items()
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+", type=Path, help="folders or zip files of OSV records")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--date", help="the snapshot date to record (default: newest record)")
    parser.add_argument("--note", help="what the sources are (commit, mirror), put first in the scope")
    args = parser.parse_args(argv)
    missing = [s for s in args.sources if not s.exists()]
    if missing:
        print(f"no such source: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    data = build(args.sources, args.date)
    if args.note:
        data["scope"] = f"{args.note}; {data['scope']}"
    count = sum(len(names) for names in data["packages"].values())
    if not count:
        print("no MAL- records found; the list is left as it was", file=sys.stderr)
        return 1
    args.out.write_text(dump(data), encoding="utf-8")
    print(f"{args.out}: {count} packages, snapshot {data['snapshot']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
