"""The dashboard's JSON API and auth, over HTTP against a real daemon subprocess (no browser needed)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from daemon_util import Daemon
from dashboard_util import login_url, seeded_daemon

from server import dashboard

pytestmark = pytest.mark.e2e
TOKEN = "dash-api-token"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, e5: object) -> Iterator[tuple[Daemon, dict[str, str]]]:
    with seeded_daemon(tmp_path_factory.mktemp("dash_api"), e5, TOKEN) as world:
        yield world


@pytest.fixture(scope="module")
def api(world: tuple[Daemon, dict[str, str]]) -> Iterator[httpx.Client]:
    d, _ = world
    with httpx.Client(base_url=d.url, headers=d.headers(), timeout=60) as c:
        yield c


def test_login_link_is_one_time_and_sets_a_strict_httponly_cookie(world: tuple[Daemon, dict[str, str]]) -> None:
    d, _ = world
    url = login_url(d.lines)
    with httpx.Client(timeout=30) as c:
        assert c.get(d.url + "/ui/api/meta").status_code == 401
        r = c.get(url)
        assert r.status_code == 303 and r.headers["location"] == "/ui/"
        cookie = r.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and "path=/ui" in cookie
        assert c.get(d.url + "/ui/api/meta").status_code == 200
        # The cookie opens /ui only: the MCP endpoints still want the bearer token.
        assert c.get(d.url + "/mcp").status_code == 401
        # And cookie requests pass the same Origin check as everything else.
        assert c.get(d.url + "/ui/api/meta", headers={"Origin": "http://evil.example"}).status_code == 403
        assert c.get(d.url + "/ui/api/meta", headers={"Host": "evil.example"}).status_code == 421
    with httpx.Client(timeout=30) as other:
        again = other.get(url)
        assert again.status_code == 401  # the printed link worked once
        assert "auth_token" in again.text
        # issue 29: a used link names the command that prints a new one, not a restart.
        assert "./memlane dashboard-link" in again.text and "restart" not in again.text
        # The token itself is never accepted in a URL; the sign-in form POSTs it.
        assert other.get(d.url + "/ui/login?token=" + TOKEN).status_code == 401
        r = other.post(d.url + "/ui/login", data={"token": TOKEN})
        assert r.status_code == 303 and "memlane_ui=" in r.headers["set-cookie"]
        assert other.post(d.url + "/ui/login", data={"token": TOKEN + "x"}).status_code == 401


def test_forged_or_expired_cookie_is_refused() -> None:
    good = dashboard.session_cookie("tok")
    assert dashboard.session_ok(good, "tok")
    assert not dashboard.session_ok(good, "other-token")
    issued, nonce, mac = good.split(".")
    assert not dashboard.session_ok(f"{int(issued) + 1}.{nonce}.{mac}", "tok")
    old = dashboard.session_cookie("tok", now=1_000_000)
    assert not dashboard.session_ok(old, "tok")
    assert not dashboard.session_ok("", "tok") and not dashboard.session_ok(good, "")


def test_recall_reports_lanes_and_ranks(api: httpx.Client, world: tuple[Daemon, dict[str, str]]) -> None:
    _, ids = world
    r = api.get("/ui/api/recall", params={"q": "where does Alice work?", "top_k": 5})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["hits"][0]["chunk_id"] == ids["work"]
    assert set(body["hits"][0]["ranks"]) >= {"vector", "meta"}
    assert set(body["lanes"]) == {"vector", "graph", "meta", "entity"}
    only = api.get("/ui/api/recall", params={"q": "Alice", "tags": "home"}).json()["hits"]
    assert [h["chunk_id"] for h in only] == [ids["home"]]


def test_errors_map_to_statuses_in_the_callers_language(api: httpx.Client) -> None:
    r = api.get("/ui/api/memory/m_18ec81eab1b70c56855f0000", headers={"X-Memlane-Lang": "zh"})
    assert r.status_code == 404
    assert r.json()["error"]["text"].startswith("[not_found] ") and "命名空间" in r.json()["error"]["text"]
    assert api.get("/ui/api/recall", params={"q": "x", "top_k": 101}).status_code == 400
    assert api.get("/ui/api/memories", params={"limit": 101}).status_code == 400  # pages are bounded
    r = api.post("/ui/api/memory/m_x/forget", content=b"reason=x",
                 headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 400 and "application/json" in r.json()["error"]["message"]
    r = api.post("/ui/api/memory/m_x/forget", json={"reason": "x", "bogus": 1})
    assert r.status_code == 400 and "bogus" in r.json()["error"]["message"]


def test_pagination_walks_every_memory_once(api: httpx.Client) -> None:
    seen, before = [], None
    for _ in range(10):
        page = api.get("/ui/api/memories", params={"limit": 1, "before": before}).json()
        seen += [m["chunk_id"] for m in page["items"]]
        before = page["next"]
        if before is None:
            break
    assert len(seen) == len(set(seen)) == 4  # the default namespace's four live memories


def test_memory_detail_edit_restore_and_forget(api: httpx.Client, world: tuple[Daemon, dict[str, str]]) -> None:
    _, ids = world
    d = api.get(f"/ui/api/memory/{ids['home']}").json()
    assert d["memory"]["content"].startswith("Alice lives in Berlin")
    assert {e["name"] for e in d["entities"]} >= {"Alice", "Berlin"}
    assert any(r["predicate"] == "lives_in" and r["evidence"] for r in d["relations"])
    new = api.post(f"/ui/api/memory/{ids['home']}/update", json={"content": "Alice lives in Hamburg now."}).json()
    assert new["previous_id"] == ids["home"]
    restored = api.post(f"/ui/api/memory/{new['chunk_id']}/restore", json={"version_id": ids["home"]}).json()
    d = api.get(f"/ui/api/memory/{restored['chunk_id']}").json()
    assert [v["content"] for v in d["versions"]] == ["Alice lives in Berlin with her cat Mochi.",
                                                     "Alice lives in Hamburg now.",
                                                     "Alice lives in Berlin with her cat Mochi."]
    assert d["current_id"] == restored["chunk_id"] and d["memory"]["tags"] == ["home"]
    f = api.post(f"/ui/api/memory/{restored['chunk_id']}/forget", json={"reason": "moved away"}).json()
    assert f["forgotten"] is True
    d = api.get(f"/ui/api/memory/{restored['chunk_id']}").json()
    assert d["memory"]["valid_until"] and d["memory"]["forgotten_reason"] == "moved away" and d["current_id"] is None


def test_graph_entities_and_health(api: httpx.Client) -> None:
    g = api.get("/ui/api/graph", params={"entity": "Alice"}).json()
    assert {n["name"] for n in g["nodes"]} >= {"Alice", "SAP", "Walldorf", "Bob"}
    assert {e["predicate"] for e in g["edges"]} >= {"works_at", "located_in", "manages"}
    past = api.get("/ui/api/graph", params={"entity": "Alice", "as_of": "2000-01-01T00:00:00Z"}).json()
    assert past["edges"] == []  # the time filter reaches graph_query
    ents = api.get("/ui/api/entities", params={"q": "ali", "limit": 5}).json()
    assert ents["items"][0]["name"] == "Alice" and all("ali" in e["name"].lower() for e in ents["items"])
    h = api.get("/ui/api/health", params={"days": 1}).json()
    assert h["facts"]["chunks"] >= 5 and h["bucket"] == "hour" and h["latency"][0]["calls"] >= 3
    assert any(r["query"] == "zzqx" for r in h["empty_24h"])
    assert h["slowest_24h"] == sorted(h["slowest_24h"], key=lambda r: -r["took_ms"])
    assert {k["kind"] for k in h["entity_kinds"]} >= {"person", "org"}


def test_namespaces_export_and_rename(api: httpx.Client) -> None:
    items = api.get("/ui/api/namespaces").json()["items"]
    assert [n["namespace"] for n in items] == ["default", "side"]
    r = api.get("/ui/api/namespaces/side/export")
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
    lines = [json.loads(x) for x in r.text.splitlines()]  # the portable format (portable.py)
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "end"
    assert [x["content"] for x in lines if x["type"] == "chunk"] == ["The side project ships in March."]
    assert {x.get("namespace", x.get("name")) for x in lines[1:-1]} == {"side"}
    r = api.post("/ui/api/namespaces/side/rename", json={"new": "side-renamed"})
    assert r.status_code == 200 and r.json()["moved"]["chunks"] == 1 and r.json()["moved"]["vectors"] == 1
    assert api.post("/ui/api/namespaces/side-renamed/rename", json={"new": "default"}).status_code == 409
    hits = api.get("/ui/api/recall", params={"q": "side project", "namespace": "side-renamed"}).json()["hits"]
    assert hits and hits[0]["content"].startswith("The side project")
    assert api.get("/ui/api/namespaces/side/export").status_code == 404


def test_static_assets_need_auth_too(world: tuple[Daemon, dict[str, str]], api: httpx.Client) -> None:
    d, _ = world
    assert httpx.get(d.url + "/ui/static/app.js", timeout=30).status_code == 401
    r = api.get("/ui/static/app.js")
    assert r.status_code == 200 and "MemlaneGraph" in r.text
    assert "http://" not in api.get("/ui/").text.replace("http://www.w3.org", "")  # nothing from a CDN
