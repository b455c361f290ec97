"""The optional LLM extractor against a small OpenAI-compatible server started on loopback."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from config import load_config
from lang import extractor_llm
from memory import Memory


class FakeLLM:
    """Answers /v1/chat/completions according to `mode`; counts the calls it received."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.calls = 0
        self.auth: list[str | None] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                outer.calls += 1
                outer.auth.append(self.headers.get("Authorization"))
                length = int(self.headers.get("Content-Length") or 0)
                req = json.loads(self.rfile.read(length))
                assert self.path == "/v1/chat/completions" and req["messages"][-1]["role"] == "user"
                mode = outer.mode
                if mode == "flaky":
                    mode = "error" if outer.calls == 1 else "ok"
                if mode == "slow":
                    time.sleep(1.0)
                    mode = "ok"
                if mode == "error":
                    self.send_response(500)
                    self.end_headers()
                    return
                if mode == "malformed":
                    content = '{"facts": [ {"type": "fact", "text": "unterminated'
                else:
                    content = json.dumps({"facts": [
                        {"type": "role", "text": "Alice is the tech lead at Stripe."},
                        {"type": "location", "text": "Alice lives in Berlin."},
                        {"type": "nonsense", "text": "Alice likes tea."}]})
                body = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    server = FakeLLM()
    yield server
    server.close()


def _cfg(tmp_path: Path, url: str, **extra: Any):  # type: ignore[no-untyped-def]
    return load_config({"HOME": str(tmp_path)}, overrides={
                                       "facts": True, "extractor": "openai", "extractor_url": url,
                                       "extractor_model": "tiny", "extractor_key_env": "LLM_TEST_KEY",
                                       "extractor_timeout_ms": 300, "extractor_retries": 1, **extra})


def test_typed_facts_from_the_endpoint(tmp_path: Path, llm: FakeLLM, e5) -> None:  # type: ignore[no-untyped-def]
    with Memory(tmp_path / "m.db", config=_cfg(tmp_path, llm.url), embedder=e5) as mem:
        r = mem.remember("Alice is our tech lead at Stripe; she lives in Berlin and likes tea.")
        assert r["created"] and len(r["facts"]) == 3 and r["warnings"] == []
        rows = mem.store.reader().execute(
            "select content, metadata from chunks where kind = 'fact' order by seq").fetchall()
        assert rows[0][0] == "Alice is the tech lead at Stripe."
        assert json.loads(rows[0][1])["fact_kinds"] == ["role"]
        assert json.loads(rows[2][1])["fact_kinds"] == ["fact"]  # unknown types become plain facts


def test_key_comes_from_the_named_variable(tmp_path: Path, llm: FakeLLM) -> None:
    got, _ = extractor_llm.extract("Alice lives in Berlin.", _cfg(tmp_path, llm.url),
                                   environ={"LLM_TEST_KEY": "sk-local-test"})
    assert got and llm.auth == ["Bearer sk-local-test"]
    extractor_llm.extract("Alice lives in Berlin.", _cfg(tmp_path, llm.url), environ={})
    assert llm.auth[-1] is None  # no key configured: no header (a local server needs none)


def test_timeout_retries_then_falls_back_to_rules(tmp_path: Path, llm: FakeLLM, e5) -> None:  # type: ignore[no-untyped-def]
    llm.mode = "slow"
    with Memory(tmp_path / "m.db", config=_cfg(tmp_path, llm.url), embedder=e5) as mem:
        r = mem.remember("Alice joined Stripe in 2021. She's the new tech lead there.")
        assert r["created"]  # the memory is always stored
        assert r["warnings"] and "timed out" in r["warnings"][0]
        facts = [row[0] for row in mem.store.reader().execute("select content from chunks where kind = 'fact'")]
        assert "Alice is the new tech lead there." in facts  # the rule extractor's pronoun carry-over
    assert llm.calls == 2  # one try plus one retry


def test_malformed_json_falls_back(tmp_path: Path, llm: FakeLLM) -> None:
    llm.mode = "malformed"
    got, why = extractor_llm.extract("Alice lives in Berlin.", _cfg(tmp_path, llm.url), sleep=lambda s: None)
    assert got is None and "malformed JSON" in why
    assert llm.calls == 2


def test_server_error_is_retried_with_backoff(tmp_path: Path, llm: FakeLLM) -> None:
    llm.mode = "flaky"
    slept: list[float] = []
    got, why = extractor_llm.extract("Alice lives in Berlin.", _cfg(tmp_path, llm.url), sleep=slept.append)
    assert got is not None and len(got) == 3 and why == ""
    assert slept == [extractor_llm.BACKOFF_S]


def test_unreachable_endpoint_falls_back(tmp_path: Path) -> None:
    # A closed loopback port: connection refused, every attempt.
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    cfg = _cfg(tmp_path, f"http://127.0.0.1:{port}/v1", extractor_retries=2)
    slept: list[float] = []
    got, why = extractor_llm.extract("x y z", cfg, sleep=slept.append)
    assert got is None and why
    assert slept == [extractor_llm.BACKOFF_S, extractor_llm.BACKOFF_S * 2]


def test_parse_rejects_shapes() -> None:
    with pytest.raises(extractor_llm.ExtractorError):
        extractor_llm.parse_facts({"choices": []})
    with pytest.raises(extractor_llm.ExtractorError):
        extractor_llm.parse_facts({"choices": [{"message": {"content": '{"items": []}'}}]})
    fenced = {"choices": [{"message": {"content": '```json\n{"facts": [{"type": "bug", "text": "x"}]}\n```'}}]}
    assert extractor_llm.parse_facts(fenced)[0].kinds == ("bug",)
