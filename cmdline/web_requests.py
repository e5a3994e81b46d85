"""``shell.web_requests``: what each curl, wget, HTTPie or xh command of a shell line would send.

A web tool's call (``web_fetch``) is judged by what can carry the user's data out: a method other
than GET, a body, headers beyond content negotiation, a URL shaped like data. The same request
made with curl used to need approval for any host off the allow-list, so agents learned that
reading a spec or an RFC costs a prompt in the shell and not in the web tool. This reader turns a
web client's argv into the request it makes, so the egress rules judge both alike.

Each command gives one map per URL it fetches (one map with ``url`` ``""`` when it names none)::

    {"client": "curl", "url": "https://example.org/x", "method": "GET",
     "headers": [{"name": "Accept", "value": "text/plain"}],
     "writes": ["out.json"], "sends": ""}

``sends`` is the reason the command can carry something of the user's out, or ``""``. The reader
is an allow-list: only the options read from each client's manual as neither sending data nor
reaching a host nobody named leave ``sends`` empty; every other option (a body, an upload, a
form, credentials, cookies, a config file, a proxy, an option this table does not know) fills it.
So do a substitution or variable anywhere in the arguments (``$(...)``, backticks, ``$VAR``: the
line does not show what they hold), stdin fed to HTTPie or xh (both send it as the body),
arguments added at run time by xargs or parallel, an environment that reconfigures the client
(``WGETRC=``, ``CURL_HOME=``, ``HOME=``, a ``*_proxy`` variable), a file named by the server
(``curl -J``, ``wget --content-disposition``, a download piped into ``tar x`` or ``cpio -i``), and
a recursive crawl that spans hosts or drops the host folder. URLs keep their query (HTTPie's
``name==value`` items are added to it) so the rules can read it; ``writes`` lists the files and
folders the response lands in, including the name a URL implies (``curl -O``, ``wget`` without
``-O``). The URL, method, headers and writes are judged by the rules, not here: the policy stays
in the pack.

Sources: the curl(1), GNU Wget, HTTPie and xh manuals.
"""

from __future__ import annotations

import posixpath
import urllib.parse
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.shell import shell_commands, shell_redirects
from dsh_policy.cmdline.writers import tar_mode

__all__ = ["CLIENTS", "shell_web_requests"]

CLIENTS: Final[frozenset[str]] = frozenset({"curl", "wget", "http", "https", "xh", "xhs"})

# ----------------------------------------------------------------------------- curl
# fmt: off
# Flags that change how the answer is read, shown or retried, never what is sent.
_CURL_FLAGS: Final[frozenset[str]] = frozenset(
    {"-s", "--silent", "-S", "--show-error", "-f", "--fail", "--fail-with-body", "--fail-early",
     "-L", "--location", "-i", "--include", "-v", "--verbose", "-k", "--insecure", "--compressed",
     "-g", "--globoff", "-N", "--no-buffer", "-#", "--progress-bar", "--no-progress-meter",
     "-O", "--remote-name", "--remote-name-all", "--create-dirs", "-R", "--remote-time",
     "--http1.0", "--http1.1", "--http2", "--http2-prior-knowledge", "--http3", "-4", "--ipv4",
     "-6", "--ipv6", "--tlsv1", "--tlsv1.2", "--tlsv1.3", "--ssl-reqd", "--raw", "--tr-encoding",
     "-Z", "--parallel", "--parallel-immediate", "--retry-connrefused", "--retry-all-errors",
     "--no-keepalive", "--tcp-nodelay", "--path-as-is", "-G", "--get", "--no-sessionid",
     "--ssl-no-revoke", "--styled-output", "--no-styled-output", "-q", "--disable",
     "--xattr", "--no-clobber", "--remove-on-error", "--next", "-:", "-I", "--head", "--show-headers"}
)
# Options taking a value that is neither sent nor a place data goes (timeouts, ranges, formats).
_CURL_VALUES: Final[frozenset[str]] = frozenset(
    {"-m", "--max-time", "--connect-timeout", "--retry", "--retry-delay", "--retry-max-time",
     "-r", "--range", "--limit-rate", "-y", "--speed-time", "-Y", "--speed-limit",
     "--max-filesize", "--max-redirs", "-C", "--continue-at", "-z", "--time-cond", "--cacert",
     "--capath", "--ciphers", "--tls-max", "--proto", "--proto-redir", "--proto-default",
     "--expect100-timeout", "--keepalive-time", "--parallel-max", "--rate", "-w", "--write-out",
     "--etag-compare"}
)
_CURL_WRITES: Final[frozenset[str]] = frozenset(
    {"-o", "--output", "--output-dir", "-D", "--dump-header", "-c", "--cookie-jar", "--trace",
     "--trace-ascii", "--stderr", "--libcurl", "--etag-save"}
)
_CURL_HEADERS: Final[dict[str, str]] = {
    "-H": "", "--header": "", "-A": "User-Agent", "--user-agent": "User-Agent", "-e": "Referer",
    "--referer": "Referer",
}
_CURL_SHORT_FLAGS: Final[str] = "sSfLivkgN#ORqZ46GIJ:"
_CURL_SHORT_VALUES: Final[str] = "mrCyYzwoDcHAeX"

# ----------------------------------------------------------------------------- wget
_WGET_FLAGS: Final[frozenset[str]] = frozenset(
    {"-q", "--quiet", "-v", "--verbose", "-nv", "--no-verbose", "-c", "--continue", "-N",
     "--timestamping", "-S", "--server-response", "--spider", "-nc", "--no-clobber", "-nd",
     "--no-directories", "-nH", "--no-host-directories", "-x", "--force-directories", "-np",
     "--no-parent", "-E", "--adjust-extension", "-k", "--convert-links", "-K", "--backup-converted",
     "-p", "--page-requisites", "-r", "--recursive", "-m", "--mirror", "-L", "--relative",
     "-b", "--background", "-4", "--inet4-only", "-6", "--inet6-only", "--https-only",
     "--no-check-certificate", "--show-progress", "--no-cache", "--ignore-length", "--no-dns-cache",
     "--retry-connrefused", "--no-cookies", "--ignore-case", "--no-use-server-timestamps",
     "--no-if-modified-since", "--unlink", "--random-wait", "--keep-session-cookies",
     "--trust-server-names", "--content-disposition", "-H", "--span-hosts", "--no-netrc"}
)
_WGET_VALUES: Final[frozenset[str]] = frozenset(
    {"-t", "--tries", "-T", "--timeout", "--dns-timeout", "--connect-timeout", "--read-timeout",
     "-w", "--wait", "--waitretry", "--limit-rate", "-Q", "--quota", "-l", "--level", "-A",
     "--accept", "-R", "--reject", "--accept-regex", "--reject-regex", "-D", "--domains",
     "--exclude-domains", "-I", "--include-directories", "-X", "--exclude-directories",
     "--cut-dirs", "--max-redirect", "--progress", "--restrict-file-names", "--default-page",
     "--compression", "--ca-certificate", "--ca-directory", "--secure-protocol",
     "--local-encoding", "--remote-encoding", "-e", "--execute"}
)
_WGET_WRITES: Final[frozenset[str]] = frozenset(
    {"-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-P",
     "--directory-prefix", "--save-cookies"}
)
_WGET_HEADERS: Final[dict[str, str]] = {
    "--header": "", "-U": "User-Agent", "--user-agent": "User-Agent", "--referer": "Referer",
}
_WGET_TWO_LETTER: Final[frozenset[str]] = frozenset({"-nv", "-nc", "-nd", "-nH", "-np"})
_WGET_SHORT_FLAGS: Final[str] = "qvcNSxEkKprmLb46H"
_WGET_SHORT_VALUES: Final[str] = "tTwQlARDIXeOoaPU"
# wgetrc commands given with -e that only change what is fetched, never what is sent.
_WGET_HARMLESS_EXECUTE = lazy_compile(r"(?i)^robots\s*=\s*(?:off|on|0|1)$")

# ----------------------------------------------------------------------------- HTTPie and xh
_HTTPIE_FLAGS: Final[frozenset[str]] = frozenset(
    {"-v", "--verbose", "-h", "--headers", "-b", "--body", "-F", "--follow", "-d", "--download",
     "-c", "--continue", "--check-status", "-I", "--ignore-stdin", "-q", "--quiet", "-S",
     "--stream", "-j", "--json", "-f", "--form", "--offline", "--all", "--sorted", "--unsorted",
     "--path-as-is", "-4", "--ipv4", "-6", "--ipv6", "--https", "--http1.1", "--http2", "--meta"}
)
_HTTPIE_VALUES: Final[frozenset[str]] = frozenset(
    {"-p", "--print", "-P", "--history-print", "--pretty", "-s", "--style", "--timeout",
     "--max-redirects", "--verify", "--format-options", "--response-charset", "--response-mime",
     "--ssl", "--ciphers", "--default-scheme"}
)
_HTTPIE_WRITES: Final[frozenset[str]] = frozenset({"-o", "--output"})
_HTTPIE_SHORT_FLAGS: Final[str] = "vhbFdcIqSjf46"
_HTTPIE_SHORT_VALUES: Final[str] = "psPo"
# fmt: on

# The separators of an HTTPie request item, longest first where one begins another.
_HTTPIE_ITEM = lazy_compile(
    r"^((?:\\.|[^\\:=@;])*?)(:=@|==@|=@|:=|==|=|@|:|;)(.*)$",
)
_METHOD_WORD = lazy_compile(r"^[A-Za-z]+$")

# ----------------------------------------------------------------------------- the line
_SCHEME = lazy_compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_UNSEEN_VALUE = lazy_compile(r"[$`]")
_CLIENT_CONFIG_ENV = lazy_compile(
    r"(?i)(?:^|[\s;&|(\x27\"])(?:WGETRC|CURL_HOME|HOME|XDG_CONFIG_HOME|HTTPIE_CONFIG_DIR|SSLKEYLOGFILE"
    r"|[A-Za-z]*_PROXY)="
)
_PIPED_INTO_STDIN_READER = lazy_compile(
    r"(?:^|[^|])\|&?\s*(?:[^|;&\n]*[\s\x27\"(])?(?:http|https|xh|xhs)(?:\s|$)"
)
_RUNTIME_ARGUMENTS = frozenset({"xargs", "parallel"})
_STDIN_REDIRECTIONS = frozenset({"<", "<&", "<<", "<<-", "<<<", "<>"})


@dataclass
class _Request:
    client: str
    urls: list[str] = field(default_factory=list)
    method: str = "GET"
    headers: list[dict[str, str]] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    sends: str = ""
    implied_names: bool = False  # the response lands in a file named after the URL
    prefix: str = ""  # the folder such files land in (curl --output-dir, wget -P)

    def refuse(self, reason: str) -> None:
        if not self.sends:
            self.sends = reason


def _header(request: _Request, fixed_name: str, value: str) -> None:
    if value.startswith("@"):
        request.refuse(f"headers read from {value[1:] or 'a file'}")
    elif fixed_name:
        request.headers.append({"name": fixed_name, "value": value})
    else:
        name, colon, rest = value.partition(":")
        request.headers.append({"name": name.strip() if colon else value, "value": rest.strip()})


def _with_scheme(address: str, default: str = "http") -> str:
    """A URL as the client completes it: curl and wget add ``http://`` (curl ``ftp://`` for an
    ``ftp.`` host), HTTPie's ``:8000/x`` is localhost."""
    if _SCHEME.match(address):
        return address
    if address.startswith(":"):
        port, _, rest = address[1:].partition("/")
        return f"{default}://localhost{':' + port if port else ''}/{rest}"
    return ("ftp://" if address.startswith("ftp.") else default + "://") + address


def _url_name(url: str) -> str:
    """The file name a URL implies (``curl -O``, ``wget`` without ``-O``)."""
    path = urllib.parse.urlsplit(url).path if "://" in url else url
    return posixpath.basename(path) or "index.html"


def _take_value(words: list[str], index: int, attached: str) -> tuple[str | None, int]:
    if attached:
        return attached, index
    if index + 1 < len(words):
        return words[index + 1], index + 1
    return None, index


def _curl(argv: list[str]) -> _Request:
    request = _Request("curl")
    words = argv[1:]
    index = 0
    while index < len(words):
        word = words[index]
        if word == "-":
            request.refuse("curl - (stdin or an empty option)")
        elif word.startswith("--"):
            if word in _CURL_FLAGS:
                if word in ("-I", "--head"):
                    request.method = "HEAD"
                elif word in ("-O", "--remote-name", "--remote-name-all"):
                    request.implied_names = True
            elif word == "--url":
                value, index = _take_value(words, index, "")
                if value is not None:
                    request.urls.append(_with_scheme(value))
            elif word in _CURL_VALUES or word in _CURL_WRITES or word in _CURL_HEADERS or word == "--request":
                value, index = _take_value(words, index, "")
                _curl_value(request, word, value)
            else:
                request.refuse(f"curl {word}")
        elif word.startswith("-") and len(word) > 1:
            cluster, index = _short_cluster(word, words, index, _CURL_SHORT_FLAGS, _CURL_SHORT_VALUES)
            if "I" in cluster.flags:
                request.method = "HEAD"
            if "O" in cluster.flags:
                request.implied_names = True
            if "J" in cluster.flags:
                request.refuse("curl -J (the server names the file)")
            if cluster.valued:
                _curl_value(request, "-" + cluster.valued, cluster.value)
            if cluster.unknown:
                request.refuse(f"curl -{cluster.unknown}")
        else:
            request.urls.append(_with_scheme(word))
        index += 1
    return request


def _curl_value(request: _Request, name: str, value: str | None) -> None:
    if value is None:
        request.refuse(f"curl {name} without its value")
    elif name in ("-X", "--request"):
        request.method = value
    elif name in _CURL_HEADERS:
        _header(request, _CURL_HEADERS[name], value)
    elif name == "--output-dir":
        request.prefix = value
        request.writes.append(value)
    elif name in _CURL_WRITES:
        request.writes.append(
            value
            if name not in ("-o", "--output") or not request.prefix
            else posixpath.join(request.prefix, value)
        )
    elif name in ("-w", "--write-out") and ("%output{" in value or value.startswith("@")):
        request.refuse("curl --write-out writing a file")


def _wget(argv: list[str]) -> _Request:
    request = _Request("wget", implied_names=True)
    words = argv[1:]
    recursive = spans = flat = False
    index = 0
    while index < len(words):
        word = words[index]
        if word.startswith("--") or word in _WGET_TWO_LETTER:
            name, equals, attached = word.partition("=")
            if name in _WGET_FLAGS and not equals:
                recursive |= name in ("-r", "--recursive", "-m", "--mirror")
                spans |= name in ("-H", "--span-hosts")
                flat |= name in ("-nd", "--no-directories", "-nH", "--no-host-directories")
                if name in ("--trust-server-names", "--content-disposition"):
                    request.refuse(f"wget {name} (the server names the file)")
            elif name in _WGET_VALUES or name in _WGET_WRITES or name in _WGET_HEADERS:
                value, index = (attached, index) if equals else _take_value(words, index, "")
                _wget_value(request, name, value)
            else:
                request.refuse(f"wget {name}")
        elif word.startswith("-") and len(word) > 1:
            cluster, index = _short_cluster(word, words, index, _WGET_SHORT_FLAGS, _WGET_SHORT_VALUES)
            recursive |= "r" in cluster.flags or "m" in cluster.flags
            spans |= "H" in cluster.flags
            if cluster.valued:
                _wget_value(request, "-" + cluster.valued, cluster.value)
            if cluster.unknown:
                request.refuse(f"wget -{cluster.unknown}")
        else:
            request.urls.append(_with_scheme(word))
        index += 1
    if recursive and (spans or flat):
        request.refuse("a recursive wget that leaves the named host or its folder")
    if recursive:
        request.implied_names = False
        request.writes.append(request.prefix or ".")
    return request


@dataclass(frozen=True, slots=True)
class _Cluster:
    """A cluster of short options (``-sSLo out.json``) as a client reads it."""

    flags: str  # the flag letters, in order
    valued: str = ""  # the letter taking a value that ends the cluster, or ""
    value: str | None = None  # its value: the rest of the word or the next word (None: missing)
    unknown: str = ""  # the first letter neither table knows (it ends the cluster), or ""


def _short_cluster(word: str, words: list[str], index: int, flags: str, valued: str) -> tuple[_Cluster, int]:
    """Read the cluster ``word`` (``words[index]``) with a client's flag and value letters; return
    it and the index of the last word it used (the next one when a value is taken from it)."""
    for position in range(1, len(word)):
        letter = word[position]
        if letter in flags:
            continue
        if letter in valued:
            value, index = _take_value(words, index, word[position + 1 :])
            return _Cluster(word[1:position], letter, value), index
        return _Cluster(word[1:position], unknown=letter), index
    return _Cluster(word[1:]), index


def _wget_value(request: _Request, name: str, value: str | None) -> None:
    if value is None:
        request.refuse(f"wget {name} without its value")
    elif name in _WGET_HEADERS:
        _header(request, _WGET_HEADERS[name], value)
    elif name in ("-e", "--execute"):
        if not _WGET_HARMLESS_EXECUTE.match(value):
            request.refuse(f"wget -e {value}")
    elif name in ("-O", "--output-document"):
        request.implied_names = False
        if value != "-":
            request.writes.append(value)
    elif name in ("-P", "--directory-prefix"):
        request.prefix = value
        request.writes.append(value)
    elif name in _WGET_WRITES:
        request.writes.append(value)


def _httpie(argv: list[str], stdin_fed: bool) -> _Request:
    client = argv[0]
    scheme = "https" if client in ("https", "xhs") else "http"
    request = _Request(client)
    positionals: list[str] = []
    words = argv[1:]
    ignore_stdin = download = False
    index = 0
    while index < len(words):
        word = words[index]
        if word.startswith("--") or (word.startswith("-") and len(word) > 1 and not positionals):
            name, equals, attached = word.partition("=")
            if word.startswith("--") and name in _HTTPIE_FLAGS and not equals:
                ignore_stdin |= name == "--ignore-stdin"
                download |= name == "--download"
            elif word.startswith("--") and (name in _HTTPIE_VALUES or name in _HTTPIE_WRITES):
                value, index = (attached, index) if equals else _take_value(words, index, "")
                if value is None:
                    request.refuse(f"{client} {name} without its value")
                elif name in _HTTPIE_WRITES:
                    request.writes.append(value)
            elif word.startswith("--"):
                request.refuse(f"{client} {name}")
            else:
                cluster, index = _short_cluster(word, words, index, _HTTPIE_SHORT_FLAGS, _HTTPIE_SHORT_VALUES)
                ignore_stdin |= "I" in cluster.flags
                download |= "d" in cluster.flags
                if cluster.valued == "o" and cluster.value is not None:
                    request.writes.append(cluster.value)
                if cluster.unknown:
                    request.refuse(f"{client} -{cluster.unknown}")
        else:
            positionals.append(word)
        index += 1
    if len(positionals) > 1 and _METHOD_WORD.match(positionals[0]):
        request.method = positionals.pop(0).upper()
    if positionals:
        url = _with_scheme(positionals[0], scheme)
        query: list[str] = []
        for item in positionals[1:]:
            found = _HTTPIE_ITEM.match(item)
            name, separator, value = found.groups() if found else (item, "", "")
            if separator == "==":
                query.append(urllib.parse.quote(name, safe="") + "=" + value)
            elif separator in (":", ";"):
                request.headers.append({"name": name, "value": value if separator == ":" else ""})
            else:
                request.refuse(f"{client} request item {item!r} (a body, a file or JSON)")
        if query:
            url += ("&" if "?" in url else "?") + "&".join(query)
        request.urls.append(url)
    if stdin_fed and not ignore_stdin:
        request.refuse(f"{client} sends its stdin as the body")
    request.implied_names = download and not request.writes
    return request


def _request_maps(request: _Request) -> list[dict[str, Any]]:
    writes = list(request.writes)
    if request.implied_names:
        writes.extend(posixpath.join(request.prefix, _url_name(url)) for url in request.urls)
    return [
        {
            "client": request.client,
            "url": url,
            "method": request.method,
            "headers": [dict(h) for h in request.headers],
            "writes": list(writes),
            "sends": request.sends,
        }
        for url in (request.urls or [""])
    ]


def _unpacks_stdin(argv: list[str]) -> bool:
    """Whether ``argv`` unpacks an archive read from stdin (``tar xz``, ``tar -xf -``, ``bsdtar
    -x``, ``cpio -i``, ``unzip -``): piped a download, the server names every file it writes."""
    if not argv:
        return False
    words = argv[1:]
    if argv[0] in ("tar", "bsdtar", "gtar"):
        if tar_mode(words) != "x":
            return False
        for index, word in enumerate(words):
            if word.startswith("--file"):
                _, equals, value = word.partition("=")
                archive = value if equals else (words[index + 1] if index + 1 < len(words) else "-")
                return archive == "-"
            bundle = (
                word[1:]
                if word.startswith("-") and not word.startswith("--")
                else (word if index == 0 else "")
            )
            if "f" in bundle:
                attached = bundle.split("f", 1)[1] if word.startswith("-") and len(word) > 2 else ""
                archive = attached or (words[index + 1] if index + 1 < len(words) else "-")
                return archive == "-"
        return True
    if argv[0] == "cpio":
        return any(
            w == "--extract" or (w.startswith("-") and not w.startswith("--") and "i" in w) for w in words
        )
    return argv[0] in ("unzip", "bsdunzip") and "-" in words


@lru_cache(maxsize=256)
def _cached(line: str) -> tuple[dict[str, Any], ...]:
    commands = shell_commands(line)
    if not any(argv and argv[0] in CLIENTS for argv in commands):
        return ()
    line_reason = ""
    if _CLIENT_CONFIG_ENV.search(line):
        line_reason = "the line sets the client's configuration or proxy in its environment"
    elif any(argv and argv[0] in _RUNTIME_ARGUMENTS for argv in commands):
        line_reason = "xargs or parallel adds arguments at run time"
    elif any(_unpacks_stdin(argv) for argv in commands):
        line_reason = "the answer is unpacked into files the server names"
    stdin_fed = bool(_PIPED_INTO_STDIN_READER.search(line)) or any(
        r["op"] in _STDIN_REDIRECTIONS for r in shell_redirects(line)
    )
    found: list[dict[str, Any]] = []
    for argv in commands:
        if not argv or argv[0] not in CLIENTS:
            continue
        if argv[0] == "curl":
            request = _curl(argv)
        elif argv[0] == "wget":
            request = _wget(argv)
        else:
            request = _httpie(argv, stdin_fed)
        if any(_UNSEEN_VALUE.search(word) for word in argv[1:]):
            request.refuse("a variable or substitution the line does not show")
        if line_reason:
            request.refuse(line_reason)
        found.extend(_request_maps(request))
    return tuple(found)


def shell_web_requests(line: str) -> list[dict[str, Any]]:
    """CEL ``shell.web_requests(line)``: one map per URL each curl, wget, HTTPie or xh command of
    the line fetches (see the module doc), as fresh maps. Same limits and errors as
    ``shell.commands``."""
    if not isinstance(line, str):
        raise TypeError(f"shell.web_requests expects a string, got {type(line).__name__}")
    return [
        {**request, "headers": [dict(h) for h in request["headers"]], "writes": list(request["writes"])}
        for request in _cached(line)
    ]
