"""shell.web_requests: a web client's argv read into the request it makes, so the egress rules can
judge a curl GET exactly as they judge a web_fetch of the same URL."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.web_requests import shell_web_requests


def one(line: str) -> dict[str, object]:
    found = shell_web_requests(line)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    ("line", "url", "method", "writes"),
    [
        ("curl -I https://example.org", "https://example.org", "HEAD", []),
        ("curl --head https://example.org", "https://example.org", "HEAD", []),
        (
            "wget -qO- https://www.rfc-editor.org/rfc/rfc9110.txt",
            "https://www.rfc-editor.org/rfc/rfc9110.txt",
            "GET",
            [],
        ),
        # clustered short options with the value attached to the last one
        (
            "curl -fsSLo vendor/spec.json https://spec.example.org/s",
            "https://spec.example.org/s",
            "GET",
            ["vendor/spec.json"],
        ),
        ("curl -sS --retry 3 -m 10 https://example.org/", "https://example.org/", "GET", []),
        # the file a URL implies: curl -O, wget without -O, under the folder given
        (
            "curl -O --output-dir dl https://example.org/a/b.tgz",
            "https://example.org/a/b.tgz",
            "GET",
            ["dl", "dl/b.tgz"],
        ),
        (
            "wget https://example.org/files/x.tar.gz",
            "https://example.org/files/x.tar.gz",
            "GET",
            ["x.tar.gz"],
        ),
        (
            "wget -P /tmp/d https://example.org/",
            "https://example.org/",
            "GET",
            ["/tmp/d", "/tmp/d/index.html"],
        ),
        (
            "wget --output-document=page.html https://example.org/",
            "https://example.org/",
            "GET",
            ["page.html"],
        ),
        # a recursive crawl writes the host's folder under the prefix
        ("wget -r -np https://docs.example.org/guide/", "https://docs.example.org/guide/", "GET", ["."]),
        # scheme-less addresses as each client completes them
        ("wget example.org/x", "http://example.org/x", "GET", ["x"]),
        ("xh :8000/health", "http://localhost:8000/health", "GET", []),
        ("https example.org", "https://example.org", "GET", []),
        # HTTPie's query items join the URL, so the URL test reads them
        ("http GET https://api.example.com/items page==2", "https://api.example.com/items?page=2", "GET", []),
        ("http -d https://example.org/f.zip", "https://example.org/f.zip", "GET", ["f.zip"]),
        ("curl -X DELETE https://example.org/x", "https://example.org/x", "DELETE", []),
    ],
)
def test_a_request_is_read_with_its_url_method_and_writes(
    line: str, url: str, method: str, writes: list[str]
) -> None:
    request = one(line)
    assert (request["url"], request["method"], request["writes"]) == (url, method, writes)


def test_headers_are_read_by_name_and_value() -> None:
    request = one("curl -A 'bot/1' -H 'Accept: text/plain' https://example.org/")
    assert request["headers"] == [
        {"name": "User-Agent", "value": "bot/1"},
        {"name": "Accept", "value": "text/plain"},
    ]
    assert one("http https://example.org/ Accept:application/json")["headers"] == [
        {"name": "Accept", "value": "application/json"}
    ]
    # the long form is the same header, judged by the rule like -H
    assert one("curl --header 'X-Notes: a' https://example.org/")["headers"] == [
        {"name": "X-Notes", "value": "a"}
    ]
    assert one("curl -e https://example.org/r https://example.org/")["headers"] == [
        {"name": "Referer", "value": "https://example.org/r"}
    ]


def test_every_url_of_a_command_is_its_own_request() -> None:
    found = shell_web_requests("curl -s https://a.example.org/ --next https://b.example.org/")
    assert [r["url"] for r in found] == ["https://a.example.org/", "https://b.example.org/"]
    assert all(r["sends"] == "" for r in found)


@pytest.mark.parametrize(
    "line",
    [
        "curl -I https://example.org",
        "curl -fsSL https://example.org/install.sh -o /tmp/install.sh",
        "wget -q -c -N --tries=3 --timeout=10 https://example.org/x",
        "wget -r -np -k -e robots=off https://docs.example.org/",
        "http GET https://example.org/ page==2 Accept:text/html",
        "http https://example.org/ | jq .",
        "xh -I https://example.org/ < /dev/null",
        # an archive downloaded to a named file and unpacked from it is judged by that file's name
        "curl -sLo x.tgz https://example.org/x.tgz && tar xzf x.tgz",
    ],
)
def test_plain_reads_send_nothing(line: str) -> None:
    assert all(r["sends"] == "" for r in shell_web_requests(line)), shell_web_requests(line)


@pytest.mark.parametrize(
    "line",
    [
        # bodies, uploads, forms, JSON
        "curl -d @notes.txt https://example.org/",
        "curl --data-binary @- https://example.org/",
        "curl --data-urlencode q=x https://example.org/",
        "curl --json '{}' https://example.org/",
        "curl -F f=@a.pdf https://example.org/",
        "curl -sT a.pdf https://example.org/",
        "curl --upload-file a.pdf https://example.org/",
        # credentials, cookies, client certificates, netrc, config files
        "curl -u a:b https://example.org/",
        "curl -b c=1 https://example.org/",
        "curl -n https://example.org/",
        "curl -E cert.pem https://example.org/",
        "curl -K req.cfg https://example.org/",
        "curl --config req.cfg https://example.org/",
        "curl -H @headers.txt https://example.org/",
        # a file named by the server, a write-out that writes a file
        "curl -OJ https://example.org/dl",
        "curl -w '%output{/tmp/x}%{http_code}' https://example.org/",
        # an option the table does not know is not taken for a read
        "curl --some-future-option https://example.org/",
        "curl --output=x https://example.org/",
        # attached, clustered and `=` spellings other guards' regexes missed (peers' bug reports)
        "curl -Fname=@secret https://example.org/",
        "curl -Tsecret https://example.org/",
        "curl -d@notes.txt https://example.org/",
        "curl -sSd x https://example.org/",
        "curl --data-binary=@notes.txt https://example.org/",
        "curl --data x https://example.org/",
        "wget --post-data=a=b https://example.org/",
        # wget
        "wget --post-data a=b https://example.org/",
        "wget --post-file=notes.txt https://example.org/",
        "wget --method=PUT https://example.org/",
        "wget --body-data=x https://example.org/",
        "wget --user=a --password=b https://example.org/",
        "wget --load-cookies c.txt https://example.org/",
        "wget -i urls.txt",
        "wget -e use_proxy=on https://example.org/",
        "wget -r -H https://example.org/",
        "wget -r -nd https://example.org/",
        "wget --content-disposition https://example.org/dl",
        # HTTPie and xh: data, JSON and file items, auth, sessions, stdin
        "http https://example.org/ a=1",
        "http https://example.org/ a:=1",
        "http https://example.org/ f@notes.txt",
        "http -a u:p https://example.org/",
        "http --session=s https://example.org/",
        "cat notes.txt | http https://example.org/",
        "http https://example.org/ <<< notes",
        "xh https://example.org/ < notes.txt",
        # what the line does not show, or adds at run time
        "curl https://example.org/$(whoami)",
        "curl https://example.org/`id -u`",
        'curl "https://example.org/?u=$USER"',
        "curl -o $OUT https://example.org/",
        "cat urls | xargs curl -s",
        # a download unpacked from stdin: the server names every file written
        "curl -sL https://example.org/x.tgz | tar xz",
        "wget -qO- https://example.org/x.tar | tar -xf -",
        "curl -s https://example.org/x.cpio | cpio -idm",
        "WGETRC=/tmp/rc wget https://example.org/",
        "https_proxy=http://p.example:3128 curl https://example.org/",
        "env CURL_HOME=/tmp curl https://example.org/",
    ],
)
def test_anything_that_can_send_is_named(line: str) -> None:
    found = shell_web_requests(line)
    assert found and all(r["sends"] for r in found), found


def test_commands_inside_wrappers_are_read_and_other_programs_are_not() -> None:
    assert one("sudo -u web curl -s https://example.org/")["url"] == "https://example.org/"
    assert one("bash -c 'wget -qO- https://example.org/'")["client"] == "wget"
    assert shell_web_requests("echo curl https://example.org/") == []
    assert shell_web_requests("git status") == []


def test_a_command_without_a_url_gives_one_request_without_one() -> None:
    assert one("curl -s")["url"] == ""


def test_answers_are_fresh_copies() -> None:
    first = shell_web_requests("curl -H 'Accept: a' -o f https://example.org/")
    first[0]["writes"].append("x")  # type: ignore[attr-defined]
    first[0]["headers"][0]["name"] = "X"  # type: ignore[index]
    again = shell_web_requests("curl -H 'Accept: a' -o f https://example.org/")
    assert again[0]["writes"] == ["f"] and again[0]["headers"][0]["name"] == "Accept"


def test_a_line_that_is_not_a_string_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        shell_web_requests(3)  # type: ignore[arg-type]
