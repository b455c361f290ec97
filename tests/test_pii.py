"""The secret and personal-data scan: what it finds, and what warn, redact and reject do on a real store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from config import load_config
from contract.errors import InvalidArgument
from lang import pii
from memory import Memory

JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq7BFUpkGp3+LQmlQ\nYx2zt0kq\n-----END RSA PRIVATE KEY-----"
SAMPLES = {
    "api_key": [
        "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "sk-proj-abcdefghijklmnopT3BlbkFJabcdefghijklmnopqrst",
        "ghp_" + "A1b2C3d4E5" * 3 + "f6G7h8",
        "AKIAIOSFODNN7EXAMPLE",
    ],
    "jwt": [JWT],
    "private_key": [PEM],
    "card_number": ["4111 1111 1111 1111", "5500-0000-0000-0004", "6222021234567890128"],
    "email": ["alice.smith+memo@example.co.uk", "li.lei@qq.com"],
    "cn_mobile": ["13812345678", "+86 139 1234 5678"],
    "cn_id": ["11010519491231002X", "440304199001011233"],
}
CLEAN = [
    "Alice moved to Berlin last year.",
    "sh600089 build at 18.96 on 2024-01-05, sold 600089.SH in March",
    "order number 1234567890123 shipped",  # 13 digits, fails Luhn
    "爱丽丝去年搬到了柏林，电话区号 010",
    "the sha is 3f786850e387550fdab836ed7e6dc881de23001b",
    "skill-based routing and sk-short",
]


@pytest.mark.parametrize("kind,value", [(k, v) for k, vs in SAMPLES.items() for v in vs])
def test_each_kind_is_found_with_its_span(kind: str, value: str) -> None:
    text = f"note: {value} (keep)"
    found = pii.scan(text)
    assert [f.kind for f in found] == [kind], found
    f = found[0]
    assert text[f.start:f.end].strip() == value.strip()
    red = pii.redact(text)
    assert value not in red and pii.placeholder(kind) in red
    assert red.startswith("note: ") and red.endswith(" (keep)")


@pytest.mark.parametrize("text", CLEAN)
def test_ordinary_text_has_no_findings(text: str) -> None:
    assert pii.scan(text) == []


def test_cn_id_checksum_is_verified() -> None:
    # The same 18 characters with a wrong check digit is not an ID (and not a card, and not a phone).
    assert [f.kind for f in pii.scan("id 110105194912310021")] == []


def test_warnings_name_the_kind_never_the_value() -> None:
    text = "mail li.lei@qq.com key " + SAMPLES["api_key"][0]
    stored, warnings = pii.apply(text, "warn")
    assert stored == text
    assert sorted(w.split("]")[0] for w in warnings) == ["[pii:api_key", "[pii:email"]
    assert all("li.lei" not in w and "sk-ant" not in w for w in warnings)


def _mem(tmp_path: Path, e5, mode: str) -> Memory:
    cfg = load_config({"HOME": str(tmp_path), "MEMLANE_PII": mode})
    return Memory(tmp_path / f"{mode}.db", config=cfg, embedder=e5, start_worker=False)


def test_warn_stores_as_is_and_warns(tmp_path: Path, e5) -> None:
    with _mem(tmp_path, e5, "warn") as mem:
        r = mem.remember("Bob's email is bob@example.com")
        assert r["created"] and any(w.startswith("[pii:email]") for w in r["warnings"])
        assert "bob@example.com" in mem.history(r["chunk_id"])["versions"][0]["content"]


GHP = "ghp_" + "Qw7Er8Ty9U" * 3 + "i0Op1P"  # a GitHub token shape (ghp_ + 36)


def test_the_default_redacts_secrets_and_warns_on_personal_data(tmp_path: Path, e5) -> None:
    cfg = load_config({"HOME": str(tmp_path)})  # no MEMLANE_PII, no config file: the default
    assert cfg.pii == "secrets"
    with Memory(tmp_path / "default.db", config=cfg, embedder=e5, start_worker=False) as mem:
        r = mem.remember(f"Project Zephyr deploy token {GHP}; ask Bob at bob@example.com",
                         metadata={"auth": GHP})
        assert {w.split("]")[0] for w in r["warnings"]} == {"[pii:api_key", "[pii:email"}
        redacted = [w for w in r["warnings"] if w.startswith("[pii:api_key]")]
        assert redacted and all("placeholder" in w for w in redacted)
        content = mem.history(r["chunk_id"])["versions"][0]["content"]
        assert GHP not in content and "[redacted:api_key]" in content
        assert "bob@example.com" in content  # personal data is kept, with a warning
        hits = mem.recall("Zephyr deploy token", include_history=True)["hits"]
        assert hits and all(GHP not in json.dumps(h) for h in hits)
        mem.close()
        assert GHP.encode() not in (tmp_path / "default.db").read_bytes()


def test_warn_still_stores_a_secret_verbatim_with_a_warning(tmp_path: Path, e5) -> None:
    with _mem(tmp_path, e5, "warn") as mem:
        r = mem.remember(f"Project Zephyr deploy token {GHP}")
        assert any(w.startswith("[pii:api_key]") and "pii = " in w for w in r["warnings"])
        assert GHP in mem.history(r["chunk_id"])["versions"][0]["content"]


def test_redact_stores_a_placeholder_in_remember_and_update(tmp_path: Path, e5) -> None:
    key = SAMPLES["api_key"][0]
    with _mem(tmp_path, e5, "redact") as mem:
        r = mem.remember(f"the deploy key is {key}, phone 13812345678")
        assert {w.split("]")[0] for w in r["warnings"]} == {"[pii:api_key", "[pii:cn_mobile"}
        content = mem.history(r["chunk_id"])["versions"][0]["content"]
        assert key not in content and "13812345678" not in content
        assert "[redacted:api_key]" in content and "[redacted:cn_mobile]" in content
        u = mem.update(r["chunk_id"], f"the new key is {JWT}")
        assert any(w.startswith("[pii:jwt]") for w in u["warnings"])
        versions = mem.history(u["chunk_id"])["versions"]
        assert JWT not in versions[-1]["content"] and "[redacted:jwt]" in versions[-1]["content"]
        # Nothing in the whole file holds the values (FTS shadow tables included).
        mem.close()
        raw = (tmp_path / "redact.db").read_bytes()
        assert key.encode() not in raw and JWT.encode() not in raw and b"13812345678" not in raw


def test_reject_stores_nothing(tmp_path: Path, e5) -> None:
    with _mem(tmp_path, e5, "reject") as mem:
        with pytest.raises(InvalidArgument) as exc:
            mem.remember(f"card {SAMPLES['card_number'][0]}")
        assert exc.value.code == "invalid_argument" and "card_number" in exc.value.render("en")
        assert "4111" not in exc.value.render("en") and "4111" not in exc.value.render("zh")
        assert mem.stats()["chunks"] == 0
        ok = mem.remember("Alice likes tea")
        with pytest.raises(InvalidArgument):
            mem.update(ok["chunk_id"], "Alice's id is 11010519491231002X")
        assert mem.stats()["chunks"] == 1


def test_recall_log_never_holds_a_detected_secret(tmp_path: Path, e5) -> None:
    key = SAMPLES["api_key"][1]
    with _mem(tmp_path, e5, "warn") as mem:
        mem.remember("Alice keeps her keys in the vault")
        mem.recall(f"where is {key} or 13812345678 stored?")
        rows = mem.store.reader().execute("select query, recall_details_json from recall_log").fetchall()
        assert rows and all(key not in q and "13812345678" not in q for q, _ in rows)
        assert "[redacted:api_key]" in rows[0][0]
        assert json.loads(rows[0][1]) is not None


GHP_LONG = "ghp_" + "Zx9" * 15  # 49 characters after the prefix: longer than the detector's 36
BEARER = "Authorization: Bearer eyJ0eXAiOiJhY2Nlc3MiLCJhbGciOi.Jzd6WkO4mNq-abc_def~123"
PHONES = ["+1 415-555-0132", "(415) 555-0132", "+49 30 12345678", "010-62345678", "13812345678"]


def test_scrub_leaves_no_token_tail_no_bearer_and_no_phone_number() -> None:
    text = f"why does {GHP_LONG} fail with {BEARER} when I call " + " or ".join(PHONES) + " today?"
    out = pii.scrub(text)
    assert "Zx9" not in out and "ghp_" not in out
    assert "eyJ0eXAi" not in out and "Jzd6WkO4mNq" not in out and "abc_def" not in out
    for phone in PHONES:
        assert phone not in out and phone[-4:] not in out, (phone, out)
    assert out.startswith("why does [redacted:api_key] fail with Authorization: Bearer [redacted:bearer_token]")
    assert out.endswith(" today?")


def test_a_fixed_length_key_pattern_takes_the_whole_token() -> None:
    f = pii.scan(f"token {GHP_LONG}.")
    assert [x.kind for x in f] == ["api_key"] and f"token {GHP_LONG}."[f[0].start:f[0].end] == GHP_LONG


FIELDS = {
    "source": "from sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "tags": ["work", "mail bob@example.com"],
    "metadata": {"auth": {"header": BEARER}, "n": 3, "ok": True, "list": ["x", SAMPLES["card_number"][0]],
                 GHP_LONG: "a secret used as a key"},
    "entities": ["Alice", {"name": "13812345678", "kind": "person", "aliases": ["al", JWT]}],
    "object": SAMPLES["cn_id"][0],
}


def test_apply_fields_warn_keeps_values_and_names_every_field() -> None:
    cleaned, warnings = pii.apply_fields(FIELDS, "warn")
    assert cleaned == FIELDS
    text = "\n".join(warnings)
    for where in ("source", "tags[1]", "metadata.auth.header", "metadata.list[1]", "metadata",
                  "entities[1].name", "entities[1].aliases[1]", "object"):
        assert where in text, where
    assert "bob@example.com" not in text and GHP_LONG not in text and "4111" not in text


def test_apply_fields_redact_walks_lists_and_dicts() -> None:
    cleaned, warnings = pii.apply_fields(FIELDS, "redact")
    flat = json.dumps(cleaned)
    for secret in ("sk-ant", "bob@example.com", "eyJ0eXAi", "4111 1111", GHP_LONG, "13812345678", JWT,
                   SAMPLES["cn_id"][0]):
        assert secret not in flat, secret
    assert cleaned["tags"][0] == "work" and cleaned["metadata"]["n"] == 3 and cleaned["metadata"]["ok"] is True
    assert cleaned["entities"][1]["kind"] == "person" and cleaned["entities"][1]["aliases"][0] == "al"
    assert "[redacted:api_key]" in cleaned["metadata"]  # the key itself
    assert {w.split("]")[0] for w in warnings} >= {"[pii:api_key", "[pii:email", "[pii:bearer_token", "[pii:jwt"}


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_apply_fields_reject_names_the_field_never_the_value(name: str) -> None:
    with pytest.raises(InvalidArgument) as exc:
        pii.apply_fields({"source": "chat", name: FIELDS[name]}, "reject")
    for lang in ("en", "zh"):
        text = exc.value.render(lang)
        assert text.startswith("[invalid_argument]") and name in text
        assert GHP_LONG not in text and "bob@" not in text and "13812345678" not in text and "sk-ant" not in text
    assert pii.apply_fields({"source": "chat", "tags": ["a", "b"], "metadata": {"k": [1, "v"]}}, "reject") == (
        {"source": "chat", "tags": ["a", "b"], "metadata": {"k": [1, "v"]}}, [])


def _secret_patterns() -> list[object]:
    from detect_secrets.plugins.private_key import PrivateKeyDetector

    plugins = [*pii._secret_plugins(), PrivateKeyDetector()]
    return [r for p in plugins for r in p.denylist] + [pii._SK_KEY]  # type: ignore[attr-defined]


@pytest.mark.parametrize("pattern", _secret_patterns(), ids=lambda r: r.pattern[:40])
def test_every_secret_pattern_passes_the_gate_that_spares_loading_the_plugins(pattern) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.from_regex(pattern))
    def holds(text: str) -> None:
        assert pii._MAYBE_SECRET.search(text), text

    holds()


def test_text_without_a_digit_has_no_phone_number() -> None:
    import phonenumbers
    from hypothesis import given, settings
    from hypothesis import strategies as st

    chars = st.characters(blacklist_categories=("Nd", "Cs"))
    words = st.sampled_from(["call", "me", "at", "+", "-", "(", ")", "电话", "ONE", "FLOWERS", "1-800", "x", " "])

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.one_of(st.text(chars, max_size=8), words), max_size=12).map(" ".join))
    def holds(text: str) -> None:
        if pii._DIGIT.search(text):
            return
        for region in ("CN", "US", "ZZ"):
            assert not list(phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID))

    holds()


def test_text_with_fewer_than_eleven_digits_has_no_chinese_mobile_number() -> None:
    """`_phones` asks phonenumbers only about a text with CN_MOBILE_DIGITS digits or more."""
    import phonenumbers
    from hypothesis import given, settings
    from hypothesis import strategies as st

    digits = st.text(st.sampled_from("0123456789１３８٣"), min_size=1, max_size=6)
    glue = st.sampled_from(["", " ", "-", ".", "(", ")", "+", "+86 ", "86-", "tel:", "电话", "手机 ", "／", "x", "ext. "])

    @settings(max_examples=400, deadline=None)
    @given(st.lists(st.tuples(glue, digits), min_size=1, max_size=5).map(lambda p: "".join(a + b for a, b in p)))
    def holds(text: str) -> None:
        if len(pii._DIGIT.findall(text)) >= pii.CN_MOBILE_DIGITS:
            return
        for m in phonenumbers.PhoneNumberMatcher(text, "CN", leniency=phonenumbers.Leniency.VALID):
            assert m.number.country_code != 86 or phonenumbers.number_type(m.number) not in (
                phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE_OR_MOBILE), text

    holds()
    assert [f.kind for f in pii.scan("call 138 1234 5678")] == ["cn_mobile"]  # eleven digits: still found


def test_text_without_a_digit_an_at_or_a_long_run_skips_every_detector() -> None:
    """`scan`'s first test: every detector needs a digit, an @ or what _MAYBE_SECRET finds."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    words = st.sampled_from(["Bearer", "sk-", "xoxb", "://", "eyJ", "BEGIN RSA PRIVATE KEY", "AKIA", "ghp_", "at",
                             "dot", "com", "邮箱", " ", "-", "_", "=", "/", "+", "Ｘ"])

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.one_of(st.text(st.characters(blacklist_categories=("Nd", "Cs")), max_size=10), words),
                    max_size=12).map(" ".join))
    def holds(text: str) -> None:
        if pii._DIGIT.search(text) or "@" in text or pii._MAYBE_SECRET.search(text):
            return
        found = [*pii._secrets(text), *pii._bearers(text), *pii._numbers(text), *pii._phones(text),
                 *pii._emails(text), *pii._any_phones(text)]
        assert found == [], (text, found)

    holds()


def test_an_ordinary_query_loads_none_of_the_detectors() -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    code = ("import sys\nfrom lang import pii\n"
            "assert pii.scrub('What does Bob drink in the morning? 爱丽丝住在哪里') == "
            "'What does Bob drink in the morning? 爱丽丝住在哪里'\n"
            "print(sorted(m for m in ('detect_secrets', 'requests', 'stdnum', 'phonenumbers') if m in sys.modules))\n"
            "assert 'redacted:card_number' in pii.scrub('card 4111 1111 1111 1111 or 13812345678')\n"
            "print(sorted(m for m in ('stdnum', 'phonenumbers') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=str(root))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "['phonenumbers', 'stdnum']"]
