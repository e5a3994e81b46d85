"""Rebuild the shipped known-malicious package list from OSV malicious-package advisories.

Usage::

    dsh-policy data refresh-malicious SOURCE [SOURCE ...] [--out PATH] [--date YYYY-MM-DD]
    python tools/update_malicious_packages.py ...   (the same, from a checkout)

Each SOURCE is a folder searched recursively for OSV JSON records (a checkout of
github.com/ossf/malicious-packages, whose records live under ``osv/malicious/<ecosystem>/``, or
``tools/osv-supplement``, advisories read one by one after the checkout was taken) or a ``.zip``
of OSV records (osv.dev's per-ecosystem ``all.zip`` exports).

Malicious code is not only published as ``MAL-`` records: a popular package whose account or
build was taken over (ctx, rest-client, the crates crates.io removed) is usually reported as an
ordinary advisory of the general databases. So a folder may also be a checkout of those, and a
record of theirs is kept when it marks the release itself as malicious (:func:`malicious_code`):
``MAL-`` ids; the CWE for embedded malicious code (CWE-506, GitHub's advisories); RustSec's
``malicious`` category (its ``osv`` branch, ``crates/*.json``); or a summary saying the release
carries a backdoor or malware or was replaced by a malicious one (PyPA's advisory-database, OSV
records in YAML, ``vulns/<name>/*.yaml``; RubySec's ruby-advisory-db, its own YAML,
``gems/<name>/*.yml``, read by :func:`rubysec_record`). Every other advisory (a vulnerability
an attacker exploits, not a release that attacks) is dropped.
Everything is read offline from what is given: getting the records is the caller's step (``git
clone``, a download), so the refresh is reviewable and repeatable.

The output (default: ``cmdline/effects/malicious_packages.json``) is what
``dsh_policy.cmdline.effects.packages`` reads, in JSON lines so the header is read alone (the
policy digest names the snapshot without parsing tens of thousands of names): line 1 the header
(``format`` 2, ``source``, ``snapshot`` date, ``scope``: each source with its newest record's date
and count), then one line per ecosystem, ``{"ecosystem": ..., "packages": {name: entry}}``, names
normalized the way the ecosystem compares them. An entry is the advisory id alone (a string) when
every version is malicious, else ``{"id", "versions"?, "advisories"?, "ranges"?}``. The id is the
package's first advisory; a version or range only another advisory of the same package lists
names that one (``advisories``: version -> id; a range's own ``id``), so a verdict cites the
record that lists the version and the file grows only where a package has several. Withdrawn
records are dropped. The snapshot date is the newest ``modified``
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
import re
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from dsh_policy.cmdline.effects.packages import normalize
from dsh_policy.cmdline.effects.packages import version_key as _version_key

DEFAULT_OUT = Path(__file__).with_name("malicious_packages.json")
ECOSYSTEMS = {"npm": "npm", "PyPI": "pypi", "RubyGems": "rubygems", "crates.io": "crates", "Go": "go"}
"""OSV ecosystem names to the keys the readers use; other ecosystems are not installed by the
commands the readers know and are skipped."""


_MALWARE_TEXT = re.compile(
    r"(?i)\bbackdoor(?:ed)?\b|\b(?:contains|embedded|included) malicious code"
    r"|\b(?:taken over|hijacked|replaced)\b[^.]{0,160}\bmalicious\b"
    r"|\bmalicious (?:code|version|release|project|package)s?\b[^.]{0,80}"
    r"\b(?:inserted|published|uploaded|released|distributed|added)\b"
    r"|\b(?:published|uploaded|released|distributed)\b[^.]{0,80}\b(?:containing|with) malicious code"
)
"""What an advisory of a general database says when the release itself attacks (a backdoor, a
release replaced or uploaded with malicious code), as against a vulnerability that lets a
"malicious user" or "malicious input" in."""


def malicious_code(record: dict[str, Any]) -> bool:
    """Whether a live OSV record reports a package release that is itself malicious."""
    ident = str(record.get("id", ""))
    if record.get("withdrawn"):
        return False
    if ident.startswith("MAL-"):
        return True
    specific = record.get("database_specific") or {}
    if "CWE-506" in (specific.get("cwe_ids") or ()):
        return True
    if any(
        "malicious" in ((affected.get("database_specific") or {}).get("categories") or ())
        for affected in record.get("affected", ())
    ):
        return True
    return bool(_MALWARE_TEXT.search(f"{record.get('summary', '')}\n{record.get('details', '')}"))


_RUBY_BOUND = re.compile(r"^\s*(<=|<|>=|>|~>|=)?\s*([\w.]+)\s*$")


def rubysec_record(document: dict[str, Any], name: str) -> dict[str, Any]:
    """A RubySec advisory (``gem``, ``title``, ``unaffected_versions``, ``patched_versions``) as
    an OSV record. The versions no bound excludes become one range: after the highest ``<=``/``<``
    bound, up to the lowest ``>=``/``>``/``~>`` bound above it (every version when there is none)."""
    below: list[tuple[str, str]] = []
    above: list[tuple[str, str]] = []
    for raw in [*(document.get("unaffected_versions") or ()), *(document.get("patched_versions") or ())]:
        for part in str(raw).split(","):
            match = _RUBY_BOUND.match(part)
            if match:
                op, version = match.group(1) or "=", match.group(2)
                (below if op in ("<", "<=") else above).append((op, version))
    key = _version_key
    span: dict[str, str] = {}
    if below:
        op, version = max(below, key=lambda b: key(b[1]))
        span["after" if op == "<=" else "introduced"] = version
    floor = key(span.get("after") or span.get("introduced") or "0")
    uppers = [b for b in above if b[0] != "=" and key(b[1]) > floor]
    if uppers:
        op, version = min(uppers, key=lambda b: key(b[1]))
        span["last_affected" if op == ">" else "fixed"] = version
    ident = (
        f"CVE-{document['cve']}"
        if document.get("cve")
        else f"GHSA-{document['ghsa']}"
        if document.get("ghsa")
        else name
    )
    events = [{k: v} for k, v in span.items()] or [{"introduced": "0"}]
    return {
        "id": ident,
        "modified": str(document.get("date", "")),
        "summary": str(document.get("title", "")),
        "details": str(document.get("description", "")),
        "affected": [
            {
                "package": {"ecosystem": "RubyGems", "name": str(document["gem"])},
                "ranges": [{"type": "ECOSYSTEM", "events": events}],
            }
        ],
    }


def _parse(path: Path) -> dict[str, Any] | None:
    """One advisory file: OSV JSON, OSV YAML (PyPA) or a RubySec YAML advisory; None for other
    files of a checkout (its configuration, its schemas)."""
    text = path.read_text(encoding="utf-8")
    document = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    if not isinstance(document, dict):
        return None
    if "gem" in document and "affected" not in document:
        return rubysec_record(document, path.stem)
    return document if "affected" in document else None


def records(source: Path) -> Iterator[dict[str, Any]]:
    """Every advisory in a folder (recursively: ``*.json``, ``*.yaml``, ``*.yml``) or a zip archive
    of OSV JSON records."""
    if source.suffix == ".zip":
        with zipfile.ZipFile(source) as archive:
            for name in archive.namelist():
                if name.endswith(".json"):
                    yield json.loads(archive.read(name))
        return
    paths = sorted(p for pattern in ("*.json", "*.yaml", "*.yml") for p in source.rglob(pattern))
    for path in paths:
        if not path.is_file():  # the feed has package folders named like "x.json"
            continue
        try:
            document = _parse(path)
        except (OSError, ValueError, yaml.YAMLError) as error:
            print(f"skipped {path}: {error}", file=sys.stderr)
            continue
        if document is not None:
            yield document


def _bounded(span: dict[str, Any]) -> dict[str, str] | None:
    """A range's bounds, or None for the unbounded ``introduced: 0``."""
    bounds: dict[str, str] = {}
    for event in span.get("events", ()):
        for key in ("introduced", "after", "fixed", "last_affected"):
            if key in event:
                bounds[key] = str(event[key])
    if bounds.get("introduced", "0") in ("0", "0.0.0-0", "") and not bounds.keys() - {"introduced"}:
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
    record that reports no malicious release (:func:`malicious_code`)."""
    ident = str(record.get("id", ""))
    if not malicious_code(record):
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
            by_version = entry.setdefault("by_version", {})
            for version in versions:
                by_version.setdefault(version, ident)
        if bounded:
            entry["ranges"] = entry.get("ranges", []) + [
                {**b, "id": ident} for b in bounded if b not in _bounds(entry.get("ranges", []))
            ]
        if every:
            entry["all"] = True
    return True


def _bounds(ranges: list[dict[str, str]]) -> list[dict[str, str]]:
    """Merged ranges without the advisory each came from, to compare bounds alone."""
    return [{k: v for k, v in span.items() if k != "id"} for span in ranges]


def _compact(entry: dict[str, Any]) -> str | dict[str, Any]:
    """The shipped form of one merged entry: its first id alone when every version is malicious;
    else that id with the versions and ranges, where a version or a range another advisory of the
    same package reported names that advisory (``advisories``: version -> id; a range's ``id``),
    so a verdict cites the record that lists the version."""
    ident = sorted(entry["ids"], key=lambda i: (i.startswith("MAL-0000"), i))[0]
    if entry.get("all"):
        return ident
    compact: dict[str, Any] = {"id": ident}
    if "versions" in entry:
        compact["versions"] = entry["versions"]
        others = {v: i for v, i in sorted(entry.get("by_version", {}).items()) if i != ident}
        if others:
            compact["advisories"] = others
    if "ranges" in entry:
        compact["ranges"] = [
            {k: v for k, v in span.items() if k != "id" or v != ident} for span in entry["ranges"]
        ]
    return compact


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
        "source": "ossf/malicious-packages osv/malicious (OSV MAL- advisories) and malicious-code advisories"
        " of the general databases",
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


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
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
        print("no malicious-package records found; the list is left as it was", file=sys.stderr)
        return 1
    args.out.write_text(dump(data), encoding="utf-8")
    print(f"{args.out}: {count} packages, snapshot {data['snapshot']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
