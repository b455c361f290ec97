"""The dashboard's memory page links supersession both ways (issue 29), against a real daemon: a superseded
memory's page names its replacement, the replacement's page names what it replaced. The data through the
JSON API; the page itself in a headless Chromium when Debian's /usr/bin/chromium is there."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from daemon_util import Daemon, running_daemon
from dashboard_util import login_url

from config import load_config
from memory import Memory

pytestmark = pytest.mark.e2e
TOKEN = "dash-supersede-token"
CHROMIUM = Path("/usr/bin/chromium")
Dash = tuple[Daemon, httpx.Client, dict[str, str]]  # the daemon, a client of its API, the memories' ids
OLD = "Dana lives at Kastanienallee 12 in Prenzlauer Berg."
NEW = "Dana moved to Oranienstraße 45 in Kreuzberg last month."


def seed(db_path: Path, home: Path, embedder: object) -> dict[str, str]:
    with Memory(db_path, config=load_config({"HOME": str(home)}), embedder=embedder) as m:  # type: ignore[arg-type]
        m.remember("Dana's cat is called Miso.")
        old = m.remember(OLD)["chunk_id"]
        assert m.flush(120)
        new = m.remember(NEW)["chunk_id"]
        assert m.flush(120)
    return {"old": old, "new": new}


@pytest.fixture(scope="module")
def dash(tmp_path_factory: pytest.TempPathFactory, e5: object) -> Iterator[Dash]:
    """The dashboard API of a daemon over a store where Dana's move superseded her old address."""
    tmp = tmp_path_factory.mktemp("dash_supersede")
    (tmp / "home").mkdir()
    ids = seed(tmp / "memory.db", tmp / "home", e5)
    with running_daemon(tmp, token=TOKEN) as d, httpx.Client(base_url=d.url, headers=d.headers(), timeout=60) as c:
        yield d, c, ids


def test_memory_pages_link_the_replacement_and_the_predecessor(dash: Dash) -> None:
    _, api, ids = dash
    old = api.get(f"/ui/api/memory/{ids['old']}").json()
    assert old["superseded_by"] == {"chunk_id": ids["new"], "content": NEW,
                                    "valid_from": old["superseded_by"]["valid_from"]}
    assert old["versions"][-1]["superseded_by"] == ids["new"]  # the page marks it superseded, not current
    assert "supersedes" not in old
    new = api.get(f"/ui/api/memory/{ids['new']}").json()
    assert [(x["chunk_id"], x["content"]) for x in new["supersedes"]] == [(ids["old"], OLD)]
    assert "superseded_by" not in new and "superseded_by" not in new["versions"][-1]


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_the_pages_link_both_ways_in_a_browser(dash: Dash) -> None:
    from playwright.sync_api import sync_playwright

    d, _, ids = dash
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"])
        try:
            pg = browser.new_context().new_page()
            errors: list[str] = []
            pg.on("pageerror", lambda e: errors.append(str(e)))
            pg.goto(login_url(d.lines))
            pg.evaluate("localStorage.setItem('memlane.lang', 'en')")
            pg.goto(f"{d.url}/ui/#/memory/{ids['old']}")
            pg.wait_for_selector("#view[data-ready='memory']", timeout=60_000)
            versions = pg.inner_text("#versions")
            assert "now" not in versions and "current" not in versions and "superseded" in versions, versions
            assert pg.locator("#versions li.current").count() == 0
            link = pg.locator("#superseded-by a")
            assert link.inner_text() == NEW and link.get_attribute("href").endswith(ids["new"])
            link.click()
            pg.wait_for_selector("#supersedes a", timeout=60_000)
            assert pg.inner_text("#mem-content") == NEW
            back = pg.locator("#supersedes a")
            assert back.inner_text() == OLD and back.get_attribute("href").endswith(ids["old"])
            assert pg.locator("#versions li.current").count() == 1 and pg.locator("#superseded-by").count() == 0
            assert errors == [], errors
        finally:
            browser.close()


def test_saving_a_superseded_memory_keeps_the_link_unless_reinstated(dash: Dash) -> None:
    _, api, ids = dash
    r = api.post(f"/ui/api/memory/{ids['old']}/update", json={"content": "Dana lives at Kastanienallee 14."})
    assert r.status_code == 200, r.text
    kept = r.json()
    assert kept["superseded_by"] == ids["new"]
    page = api.get(f"/ui/api/memory/{kept['chunk_id']}").json()
    assert page["superseded_by"]["chunk_id"] == ids["new"]
    bad = api.post(f"/ui/api/memory/{kept['chunk_id']}/update", json={"content": "Dana lives at no. 16.",
                                                                      "reinstate": "yes"})
    assert bad.status_code == 400 and "reinstate" in bad.json()["error"]["message"], bad.text
    r = api.post(f"/ui/api/memory/{kept['chunk_id']}/update", json={"content": "Dana lives at no. 16.",
                                                                    "reinstate": True})
    assert r.status_code == 200 and "superseded_by" not in r.json(), r.text
    assert "superseded_by" not in api.get(f"/ui/api/memory/{r.json()['chunk_id']}").json()
