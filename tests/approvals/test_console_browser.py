"""The approvals console in a real headless browser (Debian's Chromium and chromedriver, driven
by selenium): sign in, list, approve, deny, grant, revoke, a CSRF attempt from another page
refused, and a sign-in with a TOTP code (accepted once). Opt-in (a browser start costs seconds):

    apt-get install -y chromium chromium-driver && .venv/bin/pip install selenium
    DSH_TEST_BROWSER=1 .venv/bin/python -m pytest tests/approvals/test_console_browser.py -n 0
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from approval_kit import Deployment
from console_kit import pending, running_console

pytestmark = pytest.mark.skipif(
    os.environ.get("DSH_TEST_BROWSER") != "1", reason="drives a real Chromium; opt in with DSH_TEST_BROWSER=1"
)

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


@pytest.fixture
def browser() -> Iterator[Any]:
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium")
    driver_path = shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        pytest.fail(
            "DSH_TEST_BROWSER=1 but chromium or chromedriver is missing"
            " (apt-get install chromium chromium-driver)"
        )
    profile = tempfile.mkdtemp(prefix="dsh-console-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(20)
    try:
        yield driver
    finally:
        driver.quit()  # stops chromedriver and the browser it started
        shutil.rmtree(profile, ignore_errors=True)


def shown(browser: Any, by: str, value: str) -> str:
    """The text of an element once the page that holds it has loaded (clicks load a new page)."""
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    return str(
        WebDriverWait(browser, 10).until(expected_conditions.presence_of_element_located((by, value))).text
    )


def test_list_approve_deny_grant_revoke_and_a_refused_csrf_attempt(
    deployment: Deployment, browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    with running_console(deployment) as running:
        second = pending(running.queue, "git push --force origin main")
        browser.get(running.origin + "/")
        assert browser.current_url.endswith("/login")
        browser.find_element(By.ID, "token").send_keys(running.secret)
        browser.find_element(By.ID, "login").click()

        # list: both pending requests, with the call and the rule
        shown(browser, By.ID, "grant-form")
        page = browser.find_element(By.TAG_NAME, "body").text
        assert running.request in page and second in page
        assert "git push origin feature" in page and "vcs/push-needs-approval" in page

        # approve the first
        browser.find_element(By.CSS_SELECTOR, f"#approve-{running.request} button").click()
        assert "approved" in shown(browser, By.ID, "note")
        assert running.queue.snapshot()["requests"][running.request]["status"] == "approved"

        # deny the second, with a reason
        shown(browser, By.CSS_SELECTOR, f"#deny-{second}")
        browser.find_element(By.CSS_SELECTOR, f"#deny-{second} input[name=reason]").send_keys("not on main")
        browser.find_element(By.CSS_SELECTOR, f"#deny-{second} button").click()
        shown(browser, By.ID, "note")
        denied = running.queue.snapshot()["requests"][second]
        assert denied["status"] == "denied" and denied["decisions"][0]["reason"] == "not on main"

        # grant, then revoke
        browser.find_element(By.ID, "grant-rules").send_keys("vcs/*")
        browser.find_element(By.ID, "grant-session").send_keys("s1")
        browser.find_element(By.ID, "grant-match").send_keys("git push origin .*")
        browser.find_element(By.ID, "grant-submit").click()
        assert "granted" in shown(browser, By.ID, "note")
        grants = list(running.queue.snapshot()["grants"].values())
        assert len(grants) == 1 and grants[0]["session"] == "s1" and grants[0]["approver"] == "alice"
        browser.find_element(By.CSS_SELECTOR, f"#revoke-{grants[0]['id']} button").click()
        assert "revoked" in shown(browser, By.ID, "note")
        assert running.queue.snapshot()["grants"][grants[0]["id"]]["status"] == "revoked"

        # CSRF: a page elsewhere auto-submits a forged approval to the console, with the
        # browser's cookies; it is refused and nothing is decided.
        third = pending(running.queue, "git push origin release")
        attack = tmp_path / "attack.html"
        attack.write_text(
            f'<form id=f method=post action="{running.origin}/approve">'
            f'<input name=request value="{third}"><input name=valid value=1h></form>'
            "<script>document.getElementById('f').submit()</script>"
        )
        browser.get(attack.as_uri())
        refusal = shown(browser, By.ID, "refusal")
        assert "refused" in refusal
        assert running.queue.snapshot()["requests"][third]["decisions"] == []


def test_sign_in_with_the_printed_link_and_a_totp_code(deployment: Deployment, browser: Any) -> None:
    """With the second factor, the printed link fills the secret; the code typed from the
    authenticator opens the session; the same code again is refused."""
    import time

    from dsh_policy.policy.approvals.console.sessions import Sessions
    from dsh_policy.policy.approvals.console.totp import TotpCheck, totp
    from selenium.webdriver.common.by import By

    key = b"a-totp-key-of-twenty-b"
    with running_console(deployment, Sessions(totp=TotpCheck(key))) as running:
        browser.get(f"{running.origin}/login?token={running.secret}")
        shown(browser, By.ID, "code")
        assert browser.current_url.endswith(f"/login?token={running.secret}")  # no session yet
        code = totp(key, time.time())
        browser.find_element(By.ID, "code").send_keys(code)
        browser.find_element(By.ID, "login").click()
        shown(browser, By.ID, "grant-form")
        assert running.request in browser.find_element(By.TAG_NAME, "body").text
        browser.delete_all_cookies()
        browser.get(f"{running.origin}/login?token={running.secret}")
        browser.find_element(By.ID, "code").send_keys(code)
        browser.find_element(By.ID, "login").click()
        assert "not the login secret and a current code" in shown(browser, By.CSS_SELECTOR, ".error")
