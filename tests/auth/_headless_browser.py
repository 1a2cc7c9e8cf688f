"""Browser hooks for ``MCPKIT_OAUTH_BROWSER=module:function`` in the login tests' ``mcpkit``
subprocesses: ``alice`` goes through the proxy's consent page and the development
provider's login, as ``_proxy_world.sign_in`` does, with a synchronous httpx client (the
hook runs in a thread), and the redirect is followed to the loopback callback."""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit

import httpx

from tests.auth._proxy_world import ALICE, hidden_fields


def alice(url: str) -> None:
    base = "{0.scheme}://{0.netloc}".format(urlsplit(url))
    with httpx.Client(timeout=10) as browser:
        first = browser.get(url)
        if first.status_code == 200:  # the consent page
            form = {**hidden_fields(first.text), "decision": "approve"}
            first = browser.post(f"{base}/oauth/consent", data=form)
        assert first.status_code == 302, first.text
        login_url = first.headers["location"]
        page = browser.get(login_url)
        form = {**hidden_fields(page.text), "username": ALICE.username, "password": ALICE.password}
        done = browser.post(urljoin(login_url, "authorize"), data=form)
        assert done.status_code == 302, done.text
        back = browser.get(done.headers["location"])
        assert back.status_code == 302, back.text
        landed = browser.get(back.headers["location"])
        assert landed.status_code == 200, landed.text


def refuse(url: str) -> None:
    raise AssertionError(f"no login was expected, but the browser was sent to {url}")
