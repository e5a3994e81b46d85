"""Rebuild the shipped list of most-used package names that the look-alike reader compares
installs against.

Usage::

    dsh-policy data refresh-popular --pypi TOP_PYPI --npm NPM_HIGH_IMPACT [--go AWESOME_GO_README]
        [--out PATH] [--date D]
    python tools/update_popular_packages.py ...   (the same, from a checkout)

``TOP_PYPI`` is hugovk/top-pypi-packages' ``top-pypi-packages-30-days.csv`` or ``.json`` (the
15,000 PyPI projects downloaded most in 30 days, most first). ``NPM_HIGH_IMPACT`` is a checkout of
wooorm/npm-high-impact (its ``lib/top-download.js``, packages downloaded a million times a week or
more, most first, and ``lib/top-dependent.js``, packages with the most dependents).
``AWESOME_GO_README`` is avelino/awesome-go's ``README.md``: Go has no download ranking, and its
curated list of established modules (repository links on the code hosts, in the list's order) is
what a squatter's owner name imitates. All are read offline: getting them is the caller's step, so
the refresh is reviewable and repeatable.

The output (default ``cmdline/effects/popular_packages.json``) is JSON lines like the malicious
snapshot: a header (``format`` 1, ``source``, ``snapshot`` date, ``scope``), then one line per
ecosystem ``{"ecosystem", "names"}``, names normalized the way the ecosystem compares them and in
rank order (most used first). The reader takes the head of each list as the names squatters
imitate and the whole list as names that are themselves established.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

from dsh_policy.cmdline.effects.packages import normalize

DEFAULT_OUT = Path(__file__).with_name("popular_packages.json")

_JS_STRING = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")


def pypi_names(path: Path) -> tuple[list[str], str]:
    """The projects of a top-pypi-packages export, most downloaded first, and its date."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        document = json.loads(text)
        rows = sorted(document["rows"], key=lambda row: -int(row["download_count"]))
        return [normalize("pypi", row["project"]) for row in rows], str(document.get("last_update", ""))[:10]
    rows = sorted(csv.DictReader(text.splitlines()), key=lambda row: -int(row["download_count"]))
    return [normalize("pypi", row["project"]) for row in rows], ""


def npm_names(checkout: Path) -> list[str]:
    """npm-high-impact's packages: by downloads first, then by dependents, each once."""
    names: list[str] = []
    for part in ("top-download.js", "top-dependent.js"):
        text = (checkout / "lib" / part).read_text(encoding="utf-8")
        body = text.partition("=")[2]
        names += [normalize("npm", a or b) for a, b in _JS_STRING.findall(body)]
    return list(dict.fromkeys(names))


_GO_REPOSITORY = re.compile(
    r"https?://((?:github\.com|gitlab\.com|bitbucket\.org|codeberg\.org)/[\w.-]+/[\w.-]+)"
)


def go_modules(readme: Path) -> list[str]:
    """The repositories awesome-go links (``github.com/owner/repo``, lower case: the code hosts
    compare owners and names without case), in the list's order, each once."""
    text = readme.read_text(encoding="utf-8")
    found = (re.sub(r"\.git$", "", m.group(1)).lower().rstrip(".") for m in _GO_REPOSITORY.finditer(text))
    return list(dict.fromkeys(found))


def dump(header: dict[str, str | int], lists: dict[str, list[str]]) -> str:
    lines = [json.dumps(header, ensure_ascii=False)]
    lines += [
        json.dumps({"ecosystem": eco, "names": names}, ensure_ascii=False, separators=(",", ":"))
        for eco, names in sorted(lists.items())
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("--pypi", type=Path, required=True, help="top-pypi-packages csv or json")
    parser.add_argument("--npm", type=Path, required=True, help="checkout of wooorm/npm-high-impact")
    parser.add_argument("--go", type=Path, help="avelino/awesome-go's README.md (Go modules)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--date", help="the snapshot date to record (default: the PyPI export's)")
    parser.add_argument("--note", help="what the sources are (commits), put first in the scope")
    args = parser.parse_args(argv)
    missing = [p for p in (args.pypi, args.npm, args.go) if p is not None and not p.exists()]
    if missing:
        print(f"no such source: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    pypi, pypi_date = pypi_names(args.pypi)
    npm = npm_names(args.npm)
    if len(pypi) < 1000 or len(npm) < 1000:
        print("fewer than 1,000 names in a source; the list is left as it was", file=sys.stderr)
        return 1
    lists = {"pypi": pypi, "npm": npm}
    scope = f"top-pypi-packages ({len(pypi)} names); npm-high-impact ({len(npm)} names)"
    source = "hugovk/top-pypi-packages (30-day downloads) and wooorm/npm-high-impact"
    if args.go is not None:
        lists["go"] = go_modules(args.go)
        if len(lists["go"]) < 500:
            print("fewer than 500 Go modules in the list; the list is left as it was", file=sys.stderr)
            return 1
        scope += f"; awesome-go ({len(lists['go'])} modules)"
        source = "hugovk/top-pypi-packages (30-day downloads), wooorm/npm-high-impact and avelino/awesome-go"
    header: dict[str, str | int] = {
        "format": 1,
        "source": source,
        "snapshot": args.date or pypi_date,
        "scope": f"{args.note}; {scope}" if args.note else scope,
    }
    args.out.write_text(dump(header, lists), encoding="utf-8")
    counts = ", ".join(f"{len(names)} {eco}" for eco, names in lists.items())
    print(f"{args.out}: {counts} names, snapshot {header['snapshot']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
