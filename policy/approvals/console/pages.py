"""The console's HTML: plain forms and one inline style sheet, nothing fetched from anywhere.

Every value from the queue is escaped (a call's arguments are the agent's text, and the agent is
the party the console guards against); every form posts to the console itself with the session's
CSRF token.
"""

from __future__ import annotations

from html import escape
from typing import Any, Final

from dsh_policy.policy.approvals.views import scope_text

STYLE: Final[str] = """
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}
table{border-collapse:collapse;width:100%;margin-bottom:1.5rem}
td,th{border:1px solid #ccc;padding:.35rem .5rem;text-align:left;vertical-align:top}
code{background:#f4f4f4;padding:0 .2rem;word-break:break-all}
form.inline{display:inline}
.note{background:#eef6ee;border:1px solid #9c9;padding:.5rem;margin-bottom:1rem}
.error{background:#fbeaea;border-color:#c99}
"""


def _page(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>{body}</body></html>"
    )


def _hidden(csrf: str, **fields: str) -> str:
    inputs = [f'<input type=hidden name=csrf value="{escape(csrf)}">']
    inputs += [f'<input type=hidden name="{escape(k)}" value="{escape(v)}">' for k, v in fields.items()]
    return "".join(inputs)


def login_page(failed: bool = False, *, code: bool = False, token: str = "") -> str:
    """The form that takes the secret the console printed (and, with TOTP, the current code)."""
    wrong = "That is not the login secret and a current code." if code else "That is not the login secret."
    note = f'<p class="note error">{wrong}</p>' if failed else ""
    second = (
        "<label>Code from your authenticator "
        "<input name=code id=code inputmode=numeric autocomplete=one-time-code></label> "
        if code
        else ""
    )
    return _page(
        "dsh-policy approvals: sign in",
        f"<h1>Approvals console</h1>{note}<form method=post action=/login>"
        "<label>Login secret (printed where the console was started) "
        f'<input type=password name=token id=token autocomplete=off value="{escape(token)}"></label> '
        f"{second}<button type=submit id=login>Sign in</button></form>",
    )


def queue_page(view: dict[str, Any], history: dict[str, Any], approver: str, csrf: str, note: str) -> str:
    """Pending requests, grants in force, a grant form, and the history."""
    parts = [
        f"<h1>Approvals</h1><p>Signed in as <b>{escape(approver)}</b>; queue <code>"
        f"{escape(view['queue'])}</code>. <a href=/>Refresh</a></p>"
    ]
    if note:
        parts.append(f'<p class="note" id=note>{escape(note)}</p>')
    parts.append(f"<h2>Pending requests ({len(view['requests'])})</h2>")
    parts.append(_requests_table(view["requests"], csrf, pending=True))
    parts.append(f"<h2>Grants in force ({len(view['grants'])})</h2>")
    parts.append(_grants_table(view["grants"], csrf, active=True))
    parts.append(_grant_form(csrf))
    closed = [r for r in history["requests"] if r["status"] != "pending"]
    ended = [g for g in history["grants"] if not g["holds"]]
    parts.append("<h2>History</h2>")
    parts.append(_requests_table(closed, csrf, pending=False))
    parts.append(_grants_table(ended, csrf, active=False))
    return _page("dsh-policy approvals", "".join(parts))


def _requests_table(requests: list[dict[str, Any]], csrf: str, *, pending: bool) -> str:
    if not requests:
        return "<p>None.</p>"
    rows = [
        "<table><tr><th>Request</th><th>Call</th><th>Rules and message</th><th>Session</th>"
        "<th>Decisions</th><th>" + ("Answer" if pending else "Status") + "</th></tr>"
    ]
    for request in requests:
        rid = str(request["id"])
        decisions = (
            "<br>".join(
                f"{escape(str(d['verdict']))} by {escape(str(d['approver']))}"
                + ("" if d["counts"] else f" (does not count: {escape(str(d['problem']))})")
                for d in request["decisions"]
            )
            or "none"
        )
        if pending:
            answer = (
                f'<form class=inline method=post action=/approve id="approve-{escape(rid)}">'
                f"{_hidden(csrf, request=rid)}<select name=valid><option value=15m>for 15 min</option>"
                "<option value=1h>for 1 hour</option></select> "
                "<button type=submit>Approve</button></form> "
                f'<form class=inline method=post action=/deny id="deny-{escape(rid)}">'
                f"{_hidden(csrf, request=rid)}<input name=reason placeholder=reason size=14> "
                "<button type=submit>Deny</button></form>"
            )
        else:
            answer = escape(str(request["status"])) + (
                f": {escape(str(request['why']))}" if request["why"] else ""
            )
        rows.append(
            f'<tr id="request-{escape(rid)}"><td><code>{escape(rid)}</code><br>'
            f"{escape(str(request['created']))}</td>"
            f"<td>{escape(str(request['tool']))} <code>{escape(str(request['call']))}</code></td>"
            f"<td>{escape(', '.join(request['rules']))}<br>{escape(str(request['message'] or ''))}</td>"
            f"<td>{escape(str(request['session']))}<br>{escape(str(request['harness']))}</td>"
            f"<td>{decisions}</td><td>{answer}</td></tr>"
        )
    return "".join(rows) + "</table>"


def _grants_table(grants: list[dict[str, Any]], csrf: str, *, active: bool) -> str:
    if not grants:
        return "<p>No grants.</p>" if active else ""
    rows = ["<table><tr><th>Grant</th><th>Scope</th><th>By</th><th>Until</th><th>Uses</th><th></th></tr>"]
    for grant in grants:
        gid = str(grant["id"])
        action = (
            f'<form class=inline method=post action=/revoke id="revoke-{escape(gid)}">'
            f"{_hidden(csrf, grant=gid)}"
            "<button type=submit>Revoke</button></form>"
            if active
            else escape(str(grant["status"]))
        )
        rows.append(
            f'<tr id="grant-{escape(gid)}"><td><code>{escape(gid)}</code></td>'
            f"<td>{escape(scope_text(grant))}</td>"
            f"<td>{escape(str(grant['approver']))}</td><td>{escape(str(grant['until']))}</td>"
            f"<td>{escape(str(grant['uses']))}</td><td>{action}</td></tr>"
        )
    return "".join(rows) + "</table>"


def _grant_form(csrf: str) -> str:
    return (
        "<h3>New grant</h3><form method=post action=/grant id=grant-form>"
        f"{_hidden(csrf)}"
        "<label>Rules <input name=rules id=grant-rules placeholder='pack/rule, pack/*' size=28></label> "
        "<label>Session <input name=session id=grant-session size=16></label> "
        "<label>Tool <input name=tool id=grant-tool size=10></label> "
        "<label>Match (RE2) <input name=match id=grant-match size=24></label> "
        "<label>For <input name=valid id=grant-valid value=30m size=5></label> "
        "<label>Reason <input name=reason id=grant-reason size=16></label> "
        "<button type=submit id=grant-submit>Grant</button></form>"
    )


def refusal_page(status: int, message: str) -> str:
    """What a refused request shows (bad CSRF token, no session, a queue error)."""
    return _page(
        "dsh-policy approvals",
        f"<h1>{status}</h1><p class='note error' id=refusal>{escape(message)}</p><p><a href=/>Back</a></p>",
    )
