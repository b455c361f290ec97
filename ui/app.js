// memlane dashboard: plain JS, no build step. Views are routed by the URL hash; every API call is
// same-origin JSON under /ui/api/ with the session cookie. Text is always set with textContent.
(function () {
  "use strict";

  // ------------------------------------------------------------ strings (the page's own UI text)
  // One row a key: [English, 中文]; t() falls back to English, then to the key.
  const LANGS = ["en", "zh"];
  const STRINGS = {
    "nav.search": ["Search", "搜索"],
    "nav.memories": ["Memories", "记忆"],
    "nav.graph": ["Graph", "图谱"],
    "nav.health": ["Health", "健康"],
    "nav.namespaces": ["Namespaces", "命名空间"],
    "field.namespace": ["Namespace", "命名空间"],
    "search.title": ["Search memories", "搜索记忆"],
    "search.query": ["Query", "查询"],
    "search.placeholder": ["What do you want to find?", "你想找什么？"],
    "search.run": ["Search", "搜索"],
    "search.source": ["Source", "来源"],
    "search.tags": ["Tags (comma)", "标签（逗号分隔）"],
    "search.since": ["Created since", "创建时间起"],
    "search.until": ["Created until", "创建时间止"],
    "search.history": ["Include history", "包含历史版本"],
    "search.as_of": ["As of", "截至时间"],
    "search.top_k": ["Top k", "返回条数"],
    "search.took": ["{n} hits in {ms} ms", "{n} 条结果，用时 {ms} 毫秒"],
    "search.none": ["No memory matched. Try other words, or another namespace.", "没有匹配的记忆。换个说法，或换个命名空间试试。"],
    "search.lanes": ["Lanes", "通道"],
    "search.score": ["score", "得分"],
    "search.not_found_by": ["not found by this lane", "此通道未找到"],
    "search.relevance": ["relevance", "相关度"],
    "search.superseded": ["superseded by", "已被取代，新记忆"],
    "search.score_title": ["the score the order follows (RRF after reranking)", "排序所依据的得分（重排后的 RRF）"],
    "search.rank": ["rank {rank} in the {lane} lane", "{lane} 通道第 {rank} 名"],
    "search.closed": ["closed {t}", "已于 {t} 关闭"],
    "search.lane_summary": ["{lane}: {hits} hits, {ms} ms", "{lane}：{hits} 条，{ms} 毫秒"],
    "mem.title": ["Memory", "记忆"],
    "mem.content": ["Content", "内容"],
    "mem.metadata": ["Metadata", "元数据"],
    "mem.facts": ["Atomic facts", "原子事实"],
    "mem.no_facts": ["No atomic facts were derived from this memory.", "这条记忆没有派生出原子事实。"],
    "mem.entities": ["Entities", "实体"],
    "mem.relations": ["Relations", "关系"],
    "mem.no_relations": ["No relations.", "没有关系。"],
    "mem.versions": ["Versions", "版本"],
    "mem.edit": ["Edit (creates a new version)", "编辑（会生成新版本）"],
    "mem.save": ["Save new version", "保存为新版本"],
    "mem.forget": ["Forget", "遗忘"],
    "mem.reason": ["Reason", "原因"],
    "mem.reason_ph": ["why forget it? (kept in history)", "为什么遗忘？（保留在历史中）"],
    "mem.restore": ["Restore as new version", "恢复为新版本"],
    "mem.purge": ["Delete for good", "永久删除"],
    "mem.purge_title": ["Delete for good", "永久删除"],
    "mem.purge_note": ["Removes every version of this memory, its vectors, index entries and the recall-log rows that name it. It cannot be undone; Forget keeps the history.", "删除这条记忆的所有版本、向量、索引条目，以及提到它的召回日志。无法撤销；“遗忘”会保留历史。"],
    "mem.purge_confirm": ["Delete every version of this memory for good? This cannot be undone.", "确定永久删除这条记忆的所有版本吗？此操作无法撤销。"],
    "mem.purged": ["Deleted for good: {n} versions and facts.", "已永久删除：{n} 个版本和事实。"],
    "mem.current": ["current", "当前"],
    "mem.closed": ["closed", "已关闭"],
    "mem.forgotten": ["forgotten: {reason}", "已遗忘：{reason}"],
    "mem.changed": ["What changed", "变更内容"],
    "mem.first": ["first version", "第一个版本"],
    "mem.same": ["content unchanged", "内容未变"],
    "mem.from_to": ["{from} → {to}", "{from} → {to}"],
    "mem.now": ["now", "至今"],
    "mem.is_closed": ["This version is closed.", "此版本已关闭。"],
    "mem.go_current": ["Open the current version", "打开当前版本"],
    "mem.evidence": ["evidence", "证据"],
    "mem.versions_more": ["showing the newest {shown} of {total} versions", "显示最新的 {shown} 个版本，共 {total} 个"],
    "mem.thread": ["In its thread", "所在线程"],
    "mem.thread_id": ["thread {id}", "线程 {id}"],
    "mem.superseded": ["superseded", "已被取代"],
    "mem.superseded_by": ["Superseded by a newer memory:", "已被更新的记忆取代："],
    "mem.supersedes": ["Supersedes (older memories this one replaced)", "取代了（被这条记忆替换的旧记忆）"],
    "k.source": ["source", "来源"],
    "k.importance": ["importance", "重要性"],
    "k.tags": ["tags", "标签"],
    "k.kind": ["kind", "类型"],
    "k.lang": ["language", "语言"],
    "k.created_at": ["created", "创建时间"],
    "k.valid_from": ["valid from", "生效时间"],
    "k.valid_until": ["valid until", "失效时间"],
    "k.id": ["id", "id"],
    "k.embedding": ["embedding", "向量"],
    "k.namespace": ["namespace", "命名空间"],
    "k.previous_id": ["previous version", "上一版本"],
    "k.forgotten_reason": ["forgotten reason", "遗忘原因"],
    "k.metadata": ["metadata", "元数据"],
    "list.title": ["Recent memories", "最近的记忆"],
    "list.show_closed": ["Show closed versions", "显示已关闭的版本"],
    "list.more": ["More", "更多"],
    "list.empty": ["This namespace has no memories yet.", "这个命名空间还没有记忆。"],
    "graph.title": ["Graph", "图谱"],
    "graph.entity": ["Entity", "实体"],
    "graph.depth": ["Depth", "深度"],
    "graph.as_of": ["As of", "截至时间"],
    "graph.show": ["Show", "显示"],
    "graph.pick": ["Pick an entity to see its neighbourhood:", "选择一个实体查看它的邻域："],
    "graph.truncated": ["The graph was cut at the node limit.", "图已按节点上限截断。"],
    "graph.edges": ["Edges", "边"],
    "graph.subject": ["subject", "主语"],
    "graph.predicate": ["predicate", "谓词"],
    "graph.object": ["object", "宾语"],
    "graph.confidence": ["confidence", "置信度"],
    "graph.hint": ["Click a node to move to it.", "点击节点即可跳转到该实体。"],
    "graph.none": ["No entities in this namespace yet.", "这个命名空间还没有实体。"],
    "health.title": ["Health", "健康"],
    "health.facts": ["Facts", "概况"],
    "health.latency": ["Recall latency (ms)", "检索延迟（毫秒）"],
    "health.growth": ["Chunks over time (last 90 days)", "记忆块数量变化（近 90 天）"],
    "health.kinds": ["Entity kinds", "实体类型"],
    "health.queue": ["Embedding queue", "向量队列"],
    "health.slowest": ["Slowest recalls, last 24 h", "近 24 小时最慢的检索"],
    "health.empty": ["Recalls with no hits, last 24 h", "近 24 小时无结果的检索"],
    "health.days": ["Period", "时间段"],
    "health.day1": ["24 h", "24 小时"],
    "health.day7": ["7 days", "7 天"],
    "health.day30": ["30 days", "30 天"],
    "health.no_data": ["No data yet.", "暂无数据。"],
    "health.when": ["when", "时间"],
    "health.query": ["query", "查询"],
    "health.ms": ["ms", "毫秒"],
    "health.hits": ["hits", "结果数"],
    "health.pending": ["pending", "待处理"],
    "health.oldest": ["oldest", "最早"],
    "health.failing": ["failing", "失败中"],
    "health.max_attempts": ["max attempts", "最多重试"],
    "health.errors": ["errors", "错误"],
    "ns.title": ["Namespaces", "命名空间"],
    "ns.name": ["namespace", "命名空间"],
    "ns.chunks": ["chunks", "记忆块"],
    "ns.live": ["live", "有效"],
    "ns.entities": ["entities", "实体"],
    "ns.relations": ["relations", "关系"],
    "ns.export": ["Export JSONL", "导出 JSONL"],
    "ns.rename": ["Rename", "重命名"],
    "ns.new_name": ["new name", "新名称"],
    "ns.renamed": ["Renamed {old} to {new}: {chunks} chunks, {vectors} vectors moved.", "已将 {old} 重命名为 {new}：移动了 {chunks} 个记忆块、{vectors} 个向量。"],
    "ns.empty": ["No namespaces yet.", "还没有命名空间。"],
    "ok.updated": ["Saved as a new version.", "已保存为新版本。"],
    "ok.forgotten": ["Forgotten.", "已遗忘。"],
    "ok.restored": ["Restored as a new version.", "已恢复为新版本。"],
    "err.network": ["The daemon did not answer ({detail}). Is it still running?", "守护进程没有响应（{detail}）。它还在运行吗？"],
    "err.login": ["Your session has ended. Open the login link the daemon printed at start (or run ./memlane dashboard-link).", "会话已结束。请打开守护进程启动时打印的登录链接（或运行 ./memlane dashboard-link）。"],
    "err.not_found": ["Not found", "未找到"],
    "err.failed": ["This page could not be loaded", "无法加载此页面"],
    "loading": ["Loading…", "加载中…"],
    "next": ["Next page", "下一页"],
  };
  const LANES = ["vector", "graph", "meta", "entity"];
  const LANE_NAMES = { en: { vector: "vector", graph: "graph", meta: "meta", entity: "entity" },
    zh: { vector: "向量", graph: "图谱", meta: "文本", entity: "实体" } };

  const root = document.documentElement;
  const state = {
    lang: localStorage.getItem("memlane.lang") || root.dataset.lang || "en",
    ns: localStorage.getItem("memlane.ns") || "default",
    seq: 0,  // navigation counter: a slow response for an old view never overwrites a newer one
  };
  if (!LANGS.includes(state.lang)) state.lang = "en";

  function t(key, params) {
    const row = STRINGS[key];
    const s = (row && (row[LANGS.indexOf(state.lang)] || row[0])) || key;
    return s.replace(/\{(\w+)\}/g, (m, k) => (params && k in params ? String(params[k]) : m));
  }
  // A duration for people: whole milliseconds, one decimal under 10 ms (the API keeps three).
  const fmtMs = x => (x === null || x === undefined ? "–" : x >= 10 ? String(Math.round(x)) : Number(x).toFixed(1));
  const laneName = lane => LANE_NAMES[state.lang][lane] || lane;

  // ------------------------------------------------------------ DOM and API helpers
  function h(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => {
      if (v === null || v === undefined || v === false) return;
      if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else if (k === "text") e.textContent = v;
      else if (k === "style") e.style.cssText = v;  // CSSOM, which the strict CSP allows (a style attribute it refuses)
      else e.setAttribute(k, v === true ? "" : v);
    });
    kids.flat().forEach(c => { if (c !== null && c !== undefined && c !== false) e.append(c.nodeType ? c : String(c)); });
    return e;
  }
  const view = () => document.getElementById("view");
  // replaceChildren without the nulls that conditional parts leave behind
  function put(el, ...kids) { el.replaceChildren(...kids.flat().filter(k => k !== null && k !== undefined && k !== false)); }

  function showError(msg) {
    const box = document.getElementById("error");
    box.textContent = msg;
    box.hidden = !msg;
  }

  async function api(path, opts) {
    opts = opts || {};
    const url = new URL(path, location.origin);
    Object.entries(opts.params || {}).forEach(([k, v]) => {
      if (v !== undefined && v !== null && v !== "" && v !== false) url.searchParams.set(k, v === true ? "1" : v);
    });
    const init = { method: opts.method || "GET", credentials: "same-origin",
      headers: { "X-Memlane-Lang": state.lang, "Accept": "application/json" } };
    if (opts.body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(opts.body);
    }
    let resp;
    try { resp = await fetch(url, init); } catch (e) { throw new Error(t("err.network", { detail: e.message })); }
    let data = null;
    try { data = await resp.json(); } catch (e) { data = null; }
    if (!resp.ok) {
      if (resp.status === 401) throw new Error(t("err.login"));
      const err = data && data.error;
      throw Object.assign(new Error(err ? err.text || err.message : `HTTP ${resp.status}`), { status: resp.status });
    }
    return data;
  }

  const fmtTime = iso => (iso ? new Date(iso).toLocaleString(state.lang === "zh" ? "zh-CN" : "en-GB") : "");
  const localToIso = v => (v ? new Date(v).toISOString() : "");
  const hashParams = () => new URLSearchParams((location.hash.split("?")[1] || ""));
  function setHash(path, params) {
    const qs = new URLSearchParams();
    Object.entries(params || {}).forEach(([k, v]) => { if (v) qs.set(k, v === true ? "1" : v); });
    const s = qs.toString();
    const next = "#" + path + (s ? "?" + s : "");
    if (location.hash === next) route(); else location.hash = next;
  }
  function ready(name) {
    view().dataset.ready = name;
    // for scripts/bench_dashboard.py: when the view was complete, and how many views completed so far
    window.memlaneReady = { name, at: performance.now(), count: ((window.memlaneReady || {}).count || 0) + 1 };
  }
  function field(labelKey, input) { return h("label", { class: "f" }, h("span", { text: t(labelKey) }), input); }
  function chipList(items, cls, linkFn) {
    return items.map(x => h("span", { class: "chip " + (cls || "") }, linkFn ? h("a", { href: linkFn(x), text: x }) : x));
  }
  const graphLink = name => "#/graph/" + encodeURIComponent(name);
  const memLink = id => "#/memory/" + encodeURIComponent(id);

  function lanesBadges(ranks) {
    return h("span", { class: "lanes" }, LANES.map(l => {
      const r = ranks[l];
      return h("span", { class: "lane " + l + (r ? " on" : ""), "data-lane": l,
        title: r ? t("search.rank", { rank: r, lane: laneName(l) }) : t("search.not_found_by"),
        text: r ? `${laneName(l)} #${r}` : `${laneName(l)} –` });
    }));
  }

  // ------------------------------------------------------------ Search
  async function viewSearch(my) {
    const p = hashParams();
    const q = h("input", { type: "search", class: "q", name: "q", value: p.get("q") || "", placeholder: t("search.placeholder"), "aria-label": t("search.query") });
    const source = h("input", { type: "text", name: "source", value: p.get("source") || "", size: 10 });
    const tags = h("input", { type: "text", name: "tags", value: p.get("tags") || "", size: 12 });
    const since = h("input", { type: "datetime-local", name: "since", value: p.get("since") || "" });
    const until = h("input", { type: "datetime-local", name: "until", value: p.get("until") || "" });
    const hist = h("input", { type: "checkbox", name: "include_history", checked: p.get("history") === "1" });
    const asOf = h("input", { type: "datetime-local", name: "as_of", value: p.get("as_of") || "" });
    const topK = h("input", { type: "number", name: "top_k", min: 1, max: 100, value: p.get("top_k") || "10", style: "width:5em" });
    const results = h("div", { id: "results" });
    const form = h("form", { class: "bar", id: "search-form", onsubmit: ev => {
      ev.preventDefault();
      setHash("/search", { q: q.value.trim(), source: source.value.trim(), tags: tags.value.trim(),
        since: since.value, until: until.value, history: hist.checked, as_of: asOf.value,
        top_k: topK.value !== "10" ? topK.value : "" });
    } },
      field("search.query", q), h("button", { type: "submit", text: t("search.run") }));
    const filters = h("div", { class: "bar" }, field("search.source", source), field("search.tags", tags),
      field("search.since", since), field("search.until", until), field("search.as_of", asOf),
      field("search.top_k", topK),
      h("label", { class: "f" }, h("span", { text: t("search.history") }), hist));
    put(view(), h("h1", { text: t("search.title") }), form, filters, results);
    q.focus();
    if (!p.get("q")) { ready("search"); return; }
    put(results, h("p", { class: "muted", text: t("loading") }));
    const res = await api("/ui/api/recall", { params: { q: p.get("q"), namespace: state.ns, source: p.get("source"),
      tags: p.get("tags"), since: localToIso(p.get("since")), until: localToIso(p.get("until")),
      include_history: p.get("history") === "1", as_of: localToIso(p.get("as_of")), top_k: p.get("top_k") } });
    if (my !== state.seq) return;
    const summary = h("p", { class: "muted", id: "search-summary" }, t("search.took", { n: res.hits.length, ms: fmtMs(res.took_ms) }), " · ",
      Object.entries(res.lanes || {}).map(([l, x]) => t("search.lane_summary", { lane: laneName(l), hits: x.hits, ms: fmtMs(x.ms) })).join(" · "));
    const cards = res.hits.map((hit, i) => h("div", { class: "card hit" + (hit.valid_until ? " closed" : "") + (hit.status === "superseded" ? " superseded" : ""), "data-chunk-id": hit.chunk_id },
      h("div", { class: "content" }, h("span", { class: "muted", text: `#${i + 1} ` }),
        h("a", { href: memLink(hit.chunk_id), text: hit.content })),
      hit.matched_fact ? h("div", { class: "muted", text: "↳ " + hit.matched_fact }) : null,
      h("div", {}, lanesBadges(hit.ranks),
        h("span", { class: "score", title: `RRF ${hit.score.toFixed(4)}`, text: `${t("search.score")} ${(hit.final_score ?? hit.score).toFixed(4)}` }),
        hit.relevance !== undefined ? h("span", { class: "relevance", text: ` · ${t("search.relevance")} ${hit.relevance.toFixed(2)}` }) : null),
      hit.superseded_by ? h("div", { class: "superseded-by" }, `${t("search.superseded")} `, h("a", { href: memLink(hit.superseded_by), text: hit.superseded_by })) : null,
      h("div", {}, chipList(hit.entities, "entity", graphLink), chipList(hit.tags, "tag")),
      h("div", { class: "muted" }, [hit.source, fmtTime(hit.created_at),
        hit.valid_until ? t("search.closed", { t: fmtTime(hit.valid_until) }) : ""].filter(Boolean).join(" · "))));
    put(results, summary, ...(cards.length ? cards : [h("p", { text: t("search.none") })]));
    ready("search");
  }

  // ------------------------------------------------------------ Memories (browse)
  async function viewMemories(my) {
    const p = hashParams();
    const showClosed = p.get("all") === "1";
    const toggle = h("input", { type: "checkbox", checked: showClosed, onchange: () => setHash("/memories", { all: toggle.checked }) });
    const res = await api("/ui/api/memories", { params: { namespace: state.ns, before: p.get("before"), all: showClosed } });
    if (my !== state.seq) return;
    const rows = res.items.map(m => h("div", { class: "card hit" + (m.valid_until ? " closed" : "") },
      h("div", { class: "content" }, h("a", { href: memLink(m.chunk_id), text: m.content })),
      h("div", {}, chipList(m.tags || [], "tag")),
      h("div", { class: "muted", text: [m.source, fmtTime(m.created_at)].filter(Boolean).join(" · ") })));
    put(view(), h("h1", { text: t("list.title") }),
      h("label", { class: "bar" }, toggle, t("list.show_closed")),
      ...(rows.length ? rows : [h("p", { text: t("list.empty") })]),
      res.next ? h("p", { class: "pager" }, h("a", { href: "#/memories?" + new URLSearchParams({ before: res.next, all: showClosed ? "1" : "" }), text: t("next") })) : null);
    ready("memories");
  }

  // ------------------------------------------------------------ A memory
  function tokens(s) { return s.match(/[\u3400-\u9fff\uf900-\ufaff]|[^\s\u3400-\u9fff\uf900-\ufaff]+|\s+/g) || []; }
  function wordDiff(a, b) {
    const x = tokens(a), y = tokens(b);
    if (x.length * y.length > 250000) return [h("del", { text: a }), " ", h("ins", { text: b })];  // bounded work
    const n = x.length, m = y.length, L = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
    for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--)
      L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
    const out = [];
    let i = 0, j = 0;
    while (i < n && j < m) {
      if (x[i] === y[j]) { out.push(x[i]); i++; j++; }
      else if (L[i + 1][j] >= L[i][j + 1]) out.push(h("del", { text: x[i++] }));
      else out.push(h("ins", { text: y[j++] }));
    }
    while (i < n) out.push(h("del", { text: x[i++] }));
    while (j < m) out.push(h("ins", { text: y[j++] }));
    return out;
  }

  // Both directions of supersession: the newer memory that replaced this one, and the older ones it replaced.
  function supersession(d) {
    const newer = d.superseded_by, older = d.supersedes || [];
    if (!newer && !older.length) return null;
    return h("div", { id: "supersession" },
      newer ? h("p", { class: "superseded-by", id: "superseded-by" }, t("mem.superseded_by"), " ",
        h("a", { href: memLink(newer.chunk_id), text: newer.content })) : null,
      older.length ? h("div", { id: "supersedes" }, h("h2", { text: t("mem.supersedes") }),
        h("ul", {}, older.map(o => h("li", { class: o.valid_until ? "closed" : "" },
          h("a", { href: memLink(o.chunk_id), text: o.content }))))) : null);
  }

  async function viewMemory(my, id) {
    const d = await api("/ui/api/memory/" + encodeURIComponent(id), { params: { namespace: state.ns } });
    if (my !== state.seq) return;
    const m = d.memory;
    const kv = h("dl", { class: "kv" });
    ["chunk_id", "namespace", "source", "importance", "kind", "lang", "created_at", "valid_from", "valid_until",
      "previous_id", "forgotten_reason", "embedding"].forEach(k => {
      const val = m[k];
      if (val === null || val === undefined || val === "") return;
      const shown = /_at$|valid_/.test(k) ? fmtTime(val) : k === "previous_id" ? h("a", { href: memLink(val), text: val }) : String(val);
      kv.append(h("dt", { text: t("k." + (k === "chunk_id" ? "id" : k)) }), h("dd", {}, shown));
    });
    kv.append(h("dt", { text: t("k.tags") }), h("dd", {}, chipList(m.tags || [], "tag")));
    const versions = h("ol", { class: "versions", id: "versions" });
    d.versions.forEach((ver, i) => {
      const prev = i > 0 ? d.versions[i - 1] : null;
      const isCurrent = ver.chunk_id === d.current_id;
      const replaced = !ver.valid_until && !!ver.superseded_by;  // live, but a newer memory replaced it: not current
      const li = h("li", { class: replaced ? "superseded" : isCurrent ? "current" : "", "data-chunk-id": ver.chunk_id },
        h("div", {}, h("a", { href: memLink(ver.chunk_id), text: ver.chunk_id }), " ",
          h("span", { class: "muted", text: t("mem.from_to", { from: fmtTime(ver.valid_from), to: ver.valid_until ? fmtTime(ver.valid_until) : replaced ? t("mem.superseded") : t("mem.now") }) }),
          replaced ? h("a", { class: "chip superseded-by", href: memLink(ver.superseded_by), text: t("mem.superseded") })
            : isCurrent ? h("span", { class: "chip", text: t("mem.current") }) : null,
          ver.forgotten_reason ? h("span", { class: "chip bad", text: t("mem.forgotten", { reason: ver.forgotten_reason }) }) : null),
        h("div", { class: "diff" }, prev ? (prev.content === ver.content ? h("span", { class: "muted", text: t("mem.same") }) : wordDiff(prev.content, ver.content))
          : h("span", {}, h("span", { class: "muted", text: t("mem.first") + ": " }), ver.content)),
        !isCurrent && d.current_id ? h("button", { class: "secondary restore", type: "button", text: t("mem.restore"), onclick: async () => {
          const r = await api("/ui/api/memory/" + encodeURIComponent(id) + "/restore", { method: "POST", body: { namespace: state.ns, version_id: ver.chunk_id } });
          location.hash = memLink(r.chunk_id);
        } }) : null);
      versions.append(li);
    });
    const editBox = h("textarea", { id: "edit-content" });
    editBox.value = m.content;
    const reason = h("input", { type: "text", id: "forget-reason", placeholder: t("mem.reason_ph"), size: 40 });
    const live = !m.valid_until;
    const actions = live ? [
      h("h2", { text: t("mem.edit") }), editBox,
      h("div", { class: "bar" }, h("button", { id: "save", type: "button", text: t("mem.save"), onclick: async () => {
        const r = await api("/ui/api/memory/" + encodeURIComponent(id) + "/update", { method: "POST", body: { namespace: state.ns, content: editBox.value } });
        location.hash = memLink(r.chunk_id);
      } })),
      h("div", { class: "bar" }, field("mem.reason", reason), h("button", { id: "forget", class: "danger", type: "button", text: t("mem.forget"), onclick: async () => {
        await api("/ui/api/memory/" + encodeURIComponent(id) + "/forget", { method: "POST", body: { namespace: state.ns, reason: reason.value.trim() || null } });
        route();
      } })),
    ] : [h("p", { class: "muted", id: "closed-note" }, t("mem.is_closed"), " ",
      d.current_id && d.current_id !== id ? h("a", { href: memLink(d.current_id), text: t("mem.go_current") }) : null)];
    // Purge is offered on every version, closed ones too: a forgotten secret is what it is for (issue 29).
    const purgeBox = h("div", { id: "purge-box" }, h("h2", { text: t("mem.purge_title") }),
      h("p", { class: "muted", text: t("mem.purge_note") }),
      h("div", { class: "bar" }, h("button", { id: "purge", class: "danger", type: "button", text: t("mem.purge"), onclick: async () => {
        if (!window.confirm(t("mem.purge_confirm"))) return;
        const r = await api("/ui/api/memory/" + encodeURIComponent(id) + "/purge", { method: "POST", body: { namespace: state.ns, confirm: true } });
        put(view(), h("p", { id: "purged", text: t("mem.purged", { n: r.purged.length }) }),
          h("p", {}, h("a", { href: "#/memories", text: t("nav.memories") })));
      } })));
    // The memory in its thread: neighbours before and after it, nearest next to it.
    const th = d.thread;
    const threadBox = th ? h("div", { id: "thread" }, h("h2", { text: t("mem.thread") }),
      h("p", { class: "muted", text: t("mem.thread_id", { id: th.id }) }),
      h("ol", { class: "thread" }, [...(th.before || []).slice().reverse(), { chunk_id: id, content: m.content, self: true },
        ...(th.after || [])].map(n => h("li", { class: n.self ? "current" : "" },
        n.self ? h("span", { text: n.content }) : h("a", { href: memLink(n.chunk_id), text: n.content }))))) : null;
    const rel = d.relations.length ? h("table", {}, h("tr", {}, ["graph.subject", "graph.predicate", "graph.object", "graph.confidence", "k.valid_from"].map(k => h("th", { text: t(k) }))),
      d.relations.map(r => h("tr", { class: r.valid_until ? "closed" : "" }, h("td", {}, h("a", { href: graphLink(r.subject), text: r.subject })),
        h("td", {}, r.predicate, r.evidence ? h("span", { class: "chip", text: t("mem.evidence") }) : null),
        h("td", {}, h("a", { href: graphLink(r.object), text: r.object })), h("td", { text: r.confidence }), h("td", { text: fmtTime(r.valid_from) }))))
      : h("p", { class: "muted", text: t("mem.no_relations") });
    put(view(), 
      h("h1", { text: t("mem.title") }),
      h("div", { class: "card" + (live ? (d.superseded_by ? " superseded" : "") : " closed") }, h("div", { class: "content", id: "mem-content", text: m.content })),
      h("div", { class: "grid2" },
        h("div", {}, h("h2", { text: t("mem.metadata") }), kv,
          Object.keys(m.metadata || {}).length ? h("pre", { text: JSON.stringify(m.metadata, null, 2) }) : null),
        h("div", {}, h("h2", { text: t("mem.entities") }), h("div", {}, chipList(d.entities.map(e => e.name), "entity", graphLink)),
          h("h2", { text: t("mem.facts") }),
          d.facts.length ? h("ul", {}, d.facts.map(f => h("li", { class: f.valid_until ? "closed" : "", text: f.content }))) : h("p", { class: "muted", text: t("mem.no_facts") }))),
      supersession(d),
      threadBox,
      h("h2", { text: t("mem.relations") }), rel,
      h("h2", { text: t("mem.versions") }),
      d.versions_total > d.versions.length ? h("p", { class: "muted", text: t("mem.versions_more", { shown: d.versions.length, total: d.versions_total }) }) : null,
      versions, ...actions, purgeBox);
    ready("memory");
  }

  // ------------------------------------------------------------ Graph
  async function viewGraph(my, entity) {
    const p = hashParams();
    const input = h("input", { type: "text", id: "graph-entity", list: "entity-list", value: entity || "", size: 24 });
    const list = h("datalist", { id: "entity-list" });
    let timer = null;
    input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(async () => {
        const r = await api("/ui/api/entities", { params: { namespace: state.ns, q: input.value, limit: 20 } }).catch(() => null);
        if (r) put(list, ...r.items.map(e => h("option", { value: e.name })));
      }, 200);
    });
    const depth = h("select", { id: "graph-depth" }, [1, 2, 3].map(n => h("option", { value: n, selected: String(n) === (p.get("depth") || "2"), text: n })));
    const asOf = h("input", { type: "datetime-local", id: "graph-as-of", value: p.get("as_of") || "" });
    const form = h("form", { class: "bar", onsubmit: ev => {
      ev.preventDefault();
      if (input.value.trim()) setHash("/graph/" + encodeURIComponent(input.value.trim()), { depth: depth.value !== "2" ? depth.value : "", as_of: asOf.value });
    } }, field("graph.entity", input), list, field("graph.depth", depth), field("graph.as_of", asOf), h("button", { type: "submit", text: t("graph.show") }));
    const body = h("div", {});
    put(view(), h("h1", { text: t("graph.title") }), form, body);
    if (!entity) {
      const r = await api("/ui/api/entities", { params: { namespace: state.ns, limit: 100 } });
      if (my !== state.seq) return;
      put(body, r.items.length ? h("p", { text: t("graph.pick") }) : h("p", { text: t("graph.none") }),
        h("div", { id: "entity-index" }, r.items.map(e => h("span", { class: "chip" }, h("a", { href: graphLink(e.name), text: `${e.name} (${e.chunks})` })))));
      ready("graph");
      return;
    }
    const g = await api("/ui/api/graph", { params: { entity, namespace: state.ns, depth: p.get("depth"), as_of: localToIso(p.get("as_of")) } });
    if (my !== state.seq) return;
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("class", "graph");
    svg.setAttribute("id", "graph-svg");
    put(body, h("p", { class: "muted" }, `${g.root.name} (${g.root.kind})`,
      g.root.aliases.length ? " · " + g.root.aliases.join(", ") : "", " · ", t("graph.hint")),
      g.truncated ? h("p", { class: "bad", text: t("graph.truncated") }) : null, svg,
      h("h2", { text: t("graph.edges") }),
      h("table", { id: "graph-edges" }, h("tr", {}, ["graph.subject", "graph.predicate", "graph.object", "graph.confidence", "k.valid_from", "k.valid_until"].map(k => h("th", { text: t(k) }))),
        g.edges.map(e => h("tr", {}, h("td", {}, h("a", { href: graphLink(e.subject), text: e.subject })), h("td", { text: e.predicate }),
          h("td", {}, h("a", { href: graphLink(e.object), text: e.object })), h("td", { text: e.confidence }),
          h("td", { text: fmtTime(e.valid_from) }), h("td", { text: fmtTime(e.valid_until) })))));
    window.MemlaneGraph.render(svg, g, n => setHash("/graph/" + encodeURIComponent(n.name), { depth: p.get("depth"), as_of: p.get("as_of") }));
    ready("graph");
  }

  // ------------------------------------------------------------ Health
  function lineChart(series, keys, colours) {
    const W = 640, H = 180, P = 32;
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("class", "chart");
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    const mk = (n, a, txt) => { const e = document.createElementNS(svg.namespaceURI, n); Object.entries(a).forEach(([k, v]) => e.setAttribute(k, v)); if (txt !== undefined) e.textContent = txt; svg.append(e); return e; };
    const max = Math.max(1, ...series.flatMap(s => keys.map(k => s[k] || 0)));
    const x = i => P + (series.length <= 1 ? (W - 2 * P) / 2 : (i * (W - 2 * P)) / (series.length - 1));
    const y = v => H - P + 8 - ((v || 0) / max) * (H - P - 8);
    mk("line", { x1: P, y1: H - P + 8, x2: W - P, y2: H - P + 8, stroke: "#d9dee7" });
    mk("text", { x: 2, y: 14 }, max.toFixed(max < 10 ? 1 : 0));
    keys.forEach((k, ki) => {
      const pts = series.map((s, i) => `${x(i)},${y(s[k])}`).join(" ");
      mk("polyline", { points: pts, fill: "none", stroke: colours[ki], "stroke-width": 2 });
      series.forEach((s, i) => mk("circle", { cx: x(i), cy: y(s[k]), r: 2.5, fill: colours[ki] }));
    });
    if (series.length) {
      mk("text", { x: P, y: H - 4 }, series[0].t || series[0].day);
      mk("text", { x: W - P, y: H - 4, "text-anchor": "end" }, series[series.length - 1].t || series[series.length - 1].day);
    }
    return svg;
  }
  function logTable(rows) {
    if (!rows.length) return h("p", { class: "muted", text: t("health.no_data") });
    return h("table", {}, h("tr", {}, ["health.when", "ns.name", "health.query", "health.ms", "health.hits"].map(k => h("th", { text: t(k) }))),
      rows.map(r => h("tr", {}, h("td", { text: fmtTime(r.created_at) }), h("td", { text: r.namespace }),
        h("td", {}, h("a", { href: "#/search?" + new URLSearchParams({ q: r.query }), text: r.query })), h("td", { text: fmtMs(r.took_ms) }), h("td", { text: r.hits }))));
  }
  async function viewHealth(my) {
    const p = hashParams();
    const days = p.get("days") || "7";
    const d = await api("/ui/api/health", { params: { days } });
    if (my !== state.seq) return;
    const f = d.facts;
    const kv = h("dl", { class: "kv", id: "health-facts" });
    [["status", f.status], ["version", `${f.version} (schema ${f.schema_version})`], ["db", f.db_path],
      ["size", `${(f.db_bytes / 1048576).toFixed(1)} MiB`], ["embedder", `${f.embedder.model} (${f.embedder.dim})`],
      ["chunks", `${f.chunks} (${f.live_chunks} live)`], ["vectors", f.vectors], ["entities", f.entities],
      ["relations", f.relations], ["namespaces", f.namespaces],
      ["recall 24h", `${f.recall_24h.calls} calls · p50 ${fmtMs(f.recall_24h.p50_ms)} ms · p95 ${fmtMs(f.recall_24h.p95_ms)} ms · ${f.recall_24h.empty} empty`]]
      .forEach(([k, v]) => kv.append(h("dt", { text: k }), h("dd", { class: k === "status" ? (v === "ok" ? "ok" : "bad") : "", text: v })));
    const daySel = h("select", { id: "health-days", onchange: () => setHash("/health", { days: daySel.value }) },
      [["1", "health.day1"], ["7", "health.day7"], ["30", "health.day30"]].map(([v, k]) => h("option", { value: v, selected: v === days, text: t(k) })));
    const maxKind = Math.max(1, ...d.entity_kinds.map(k => k.count));
    const q = d.queue;
    put(view(), h("h1", { text: t("health.title") }),
      h("div", { class: "grid2" },
        h("div", {}, h("h2", { text: t("health.facts") }), kv),
        h("div", {}, h("h2", { text: t("health.queue") }), h("dl", { class: "kv", id: "health-queue" },
          h("dt", { text: t("health.pending") }), h("dd", { text: q.pending }),
          h("dt", { text: t("health.oldest") }), h("dd", { text: fmtTime(q.oldest) || "–" }),
          h("dt", { text: t("health.failing") }), h("dd", { text: q.failing }),
          h("dt", { text: t("health.max_attempts") }), h("dd", { text: q.max_attempts }),
          q.errors.length ? [h("dt", { text: t("health.errors") }), h("dd", { text: q.errors.join(" | ") })] : null),
          h("h2", { text: t("health.kinds") }),
          d.entity_kinds.length ? h("table", { id: "entity-kinds" }, d.entity_kinds.map(k => h("tr", {}, h("td", { text: k.kind }), h("td", { text: k.count }),
            h("td", { style: "width:60%" }, h("div", { style: `background:${window.MemlaneGraph.KIND_COLOURS[k.kind] || "#7b61ff"};height:.8em;width:${(100 * k.count / maxKind).toFixed(1)}%` })))))
            : h("p", { class: "muted", text: t("health.no_data") }))),
      h("div", { class: "bar" }, h("h2", { text: t("health.latency") }), field("health.days", daySel)),
      h("div", { class: "legend" }, h("span", { style: "color:#2f6fde", text: "— p50" }), h("span", { style: "color:#c62828", text: "— p95" })),
      d.latency.length ? lineChart(d.latency, ["p50_ms", "p95_ms"], ["#2f6fde", "#c62828"]) : h("p", { class: "muted", text: t("health.no_data") }),
      h("h2", { text: t("health.growth") }),
      d.growth.length ? lineChart(d.growth, ["total"], ["#0f9d74"]) : h("p", { class: "muted", text: t("health.no_data") }),
      h("h2", { text: t("health.slowest") }), h("div", { id: "slowest" }, logTable(d.slowest_24h)),
      h("h2", { text: t("health.empty") }), h("div", { id: "empty-recalls" }, logTable(d.empty_24h)));
    ready("health");
  }

  // ------------------------------------------------------------ Namespaces
  async function viewNamespaces(my) {
    const p = hashParams();
    const r = await api("/ui/api/namespaces", { params: { after: p.get("after") } });
    if (my !== state.seq) return;
    const note = h("p", { class: "ok", id: "ns-note" });
    const rows = r.items.map(n => {
      const newName = h("input", { type: "text", size: 14, placeholder: t("ns.new_name"), "aria-label": t("ns.new_name") });
      return h("tr", { "data-ns": n.namespace }, h("td", {}, h("a", { href: "#/memories", onclick: () => setNs(n.namespace), text: n.namespace })),
        h("td", { text: n.chunks }), h("td", { text: n.live_chunks }), h("td", { text: n.entities }), h("td", { text: n.relations }),
        h("td", {}, h("a", { href: "/ui/api/namespaces/" + encodeURIComponent(n.namespace) + "/export", download: `memlane-${n.namespace}.jsonl`, text: t("ns.export") })),
        h("td", {}, h("form", { class: "bar", style: "margin:0", onsubmit: async ev => {
          ev.preventDefault();
          const res = await api("/ui/api/namespaces/" + encodeURIComponent(n.namespace) + "/rename", { method: "POST", body: { new: newName.value.trim() } });
          if (state.ns === n.namespace) setNs(res.new);
          await viewNamespaces(state.seq);
          document.getElementById("ns-note").textContent = t("ns.renamed", { old: res.old, new: res.new, chunks: res.moved.chunks, vectors: res.moved.vectors });
        } }, newName, h("button", { type: "submit", class: "secondary", text: t("ns.rename") }))));
    });
    put(view(), h("h1", { text: t("ns.title") }), note,
      rows.length ? h("table", { id: "ns-table" }, h("tr", {}, ["ns.name", "ns.chunks", "ns.live", "ns.entities", "ns.relations", "", ""].map(k => h("th", { text: k ? t(k) : "" }))), rows)
        : h("p", { text: t("ns.empty") }),
      r.next ? h("p", { class: "pager" }, h("a", { href: "#/namespaces?" + new URLSearchParams({ after: r.next }), text: t("next") })) : null);
    ready("namespaces");
  }

  // ------------------------------------------------------------ shell
  function setNs(ns) {
    state.ns = ns;
    localStorage.setItem("memlane.ns", ns);
    document.getElementById("ns").value = ns;
  }
  function applyLang() {
    root.lang = state.lang === "zh" ? "zh-CN" : "en";
    document.querySelectorAll("[data-i18n]").forEach(e => { e.textContent = t(e.dataset.i18n); });
    document.getElementById("lang-toggle").textContent = state.lang === "zh" ? "EN" : "中文";
  }
  async function route() {
    const my = ++state.seq;
    showError("");
    delete view().dataset.ready;
    const path = (location.hash.replace(/^#/, "").split("?")[0] || "/search").split("/").filter(Boolean);
    const name = path[0] || "search";
    document.querySelectorAll("header nav a").forEach(a => a.classList.toggle("active", a.dataset.view === (name === "memory" ? "memories" : name)));
    try {
      if (name === "memory" && path[1]) await viewMemory(my, decodeURIComponent(path[1]));
      else if (name === "memories") await viewMemories(my);
      else if (name === "graph") await viewGraph(my, path[1] ? decodeURIComponent(path.slice(1).join("/")) : "");
      else if (name === "health") await viewHealth(my);
      else if (name === "namespaces") await viewNamespaces(my);
      else await viewSearch(my);
    } catch (e) {
      // in place of the page: the previous view must not stay under an error about this one
      if (my === state.seq) { put(view(), h("h1", { text: t(e.status === 404 ? "err.not_found" : "err.failed") }), h("p", { id: "view-error", text: e.message })); ready(e.status === 404 ? "notfound" : "error"); }
    }
  }
  window.addEventListener("unhandledrejection", ev => { showError(ev.reason && ev.reason.message ? ev.reason.message : String(ev.reason)); });
  window.addEventListener("hashchange", route);
  document.getElementById("lang-toggle").addEventListener("click", () => {
    state.lang = state.lang === "zh" ? "en" : "zh";
    localStorage.setItem("memlane.lang", state.lang);
    applyLang();
    route();
  });
  const nsInput = document.getElementById("ns");
  nsInput.value = state.ns;
  nsInput.addEventListener("change", () => { if (nsInput.value.trim()) { setNs(nsInput.value.trim()); route(); } });
  const picked = localStorage.getItem("memlane.ns");
  const meta = api("/ui/api/meta").then(meta => {
    put(document.getElementById("ns-list"), ...meta.namespaces.map(n => h("option", { value: n })));
    // not picked yet: open where the memories are (default, or the fullest namespace while default is empty)
    if (!picked && meta.start_namespace) { state.ns = meta.start_namespace; nsInput.value = state.ns; }
  }).catch(e => showError(e.message));
  applyLang();
  (picked ? Promise.resolve() : meta).then(route);
})();
