"""The synthetic benchmark corpus: bilingual memories with people, places, stocks and codes, the questions asked
of it, and composed vectors that stand in for the model's (`memlane bench --vectors synthetic`)."""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from typing import Any

import numpy as np

NS = "bench"


WARMUP = 5


K_EXACT = 10


EN_FIRST = ("Alice Bob Carol David Emma Frank Grace Henry Irene Jack Karen Leo Maria Nathan Olivia Peter "
            "Quinn Rachel Sam Tina Uma Victor Wendy Xavier Yara Zoe Liam Mia Noah Ella").split()


EN_LAST = "Smith Johnson Brown Miller Davis Wilson Moore Taylor Clark Lewis Walker Hall Young King Wright Scott".split()


ZH_SUR = "张 王 李 刘 陈 杨 赵 黄 周 吴 徐 孙 马 朱 胡 郭 何 林 罗 高".split()


ZH_GIVEN = "伟 芳 娜 敏 静 强 磊 洋 艳 勇 军 杰 娟 涛 明 超 秀英 建华 晓东 丽华".split()


PLACES = [("Berlin", "柏林"), ("Shanghai", "上海"), ("Beijing", "北京"), ("Tokyo", "东京"), ("Paris", "巴黎"),
          ("London", "伦敦"), ("Shenzhen", "深圳"), ("Hangzhou", "杭州"), ("Singapore", "新加坡"),
          ("Sydney", "悉尼"), ("Toronto", "多伦多"), ("Seoul", "首尔"), ("Madrid", "马德里"),
          ("Chengdu", "成都"), ("Boston", "波士顿"), ("Osaka", "大阪")]


ORGS_EN = ["Acme Corp", "Globex", "Initech", "Umbrella Labs", "Stark Industries", "Hooli", "Vandelay Imports"]


ORGS_ZH = ["腾讯", "阿里巴巴", "华为", "字节跳动", "美团", "小米"]


STOCKS = [("600519.SH", "贵州茅台", "Kweichow Moutai"), ("0700.HK", "腾讯控股", "Tencent"), ("AAPL", "苹果", "Apple"),
          ("000858.SZ", "五粮液", "Wuliangye"), ("600089.SH", "特变电工", "TBEA"), ("MSFT", "微软", "Microsoft"),
          ("9988.HK", "阿里巴巴", "Alibaba"), ("NVDA", "英伟达", "Nvidia"), ("601318.SH", "中国平安", "Ping An"),
          ("TSLA", "特斯拉", "Tesla")]


TOPICS = [("budget", "预算"), ("roadmap", "路线图"), ("hiring plan", "招聘计划"), ("security audit", "安全审计"),
          ("product launch", "产品发布"), ("quarterly earnings", "季度财报"), ("data migration", "数据迁移"),
          ("customer churn", "客户流失"), ("pricing model", "定价模型"), ("supply chain", "供应链")]


FOODS = [("sushi", "寿司"), ("dumplings", "饺子"), ("ramen", "拉面"), ("pizza", "披萨"), ("hotpot", "火锅"),
         ("tacos", "小笼包")]


HOBBIES = [("hiking", "爬山"), ("chess", "下棋"), ("cycling", "骑行"), ("painting", "画画"), ("photography", "摄影")]


DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()


MONTHS = "January February March April May June July August September October November December".split()


REF_PREFIX = ("INV", "PO", "TKT", "REF", "CASE")


EN_TEMPLATES = [
    "{p} met {p2} in {place} to discuss the {topic} on {day}, ref {ref}.",
    "{p} bought {n} shares of {sname} ({stock}) at {price} after the {topic} review, ref {ref}.",
    "{p} loves {food} and goes {hobby} near {place} most weekends, ref {ref}.",
    "{p} joined {org} as head of {topic} in {month}, ref {ref}.",
    "Reminder: {p} owes {p2} {price} dollars for the {place} trip, ref {ref}.",
    "{sname} ({stock}) fell {pct}% today; {p} thinks the {topic} was the cause, ref {ref}.",
]


ZH_TEMPLATES = [
    "{p}上周在{place}和{p2}讨论了{topic}，编号{ref}。",
    "{p}以{price}元买入了{n}股{sname}（{stock}），编号{ref}。",
    "{p}喜欢吃{food}，周末常去{place}附近{hobby}，编号{ref}。",
    "{p}在{monthn}月加入了{org}，负责{topic}，编号{ref}。",
    "{p}借给{p2}{price}元去{place}旅行，编号{ref}。",
    "{sname}（{stock}）今天下跌了{pct}%，{p}认为原因是{topic}，编号{ref}。",
]


TAGS = {0: ["meeting", "work"], 1: ["trading", "finance"], 2: ["personal"], 3: ["work", "career"],
        4: ["money", "personal"], 5: ["trading", "news"]}


SOURCES = {0: "chat", 1: "trading", 2: "chat", 3: "chat", 4: "chat", 5: "trading"}


def _person(rng: random.Random, zh: bool) -> tuple[str, list[str]]:
    if zh:
        sur, given = rng.choice(ZH_SUR), rng.choice(ZH_GIVEN)
        return sur + given, [f"S:{sur}", f"G:{given}"]
    first, last = rng.choice(EN_FIRST), rng.choice(EN_LAST)
    return f"{first} {last}", [f"F:{first}", f"L:{last}"]


def make_item(i: int, seed: int) -> dict[str, Any]:
    """Chunk number i of the corpus: content, tags, entities, an optional relation, and the parts
    its synthetic vector is composed of. Deterministic in (i, seed)."""
    rng = random.Random(seed * 1_000_003 + i)
    zh = rng.random() < 0.4
    tpl = rng.randrange(6)
    p, pparts = _person(rng, zh)
    p2, p2parts = _person(rng, zh)
    while p2 == p:
        p2, p2parts = _person(rng, zh)
    place = rng.choice(PLACES)
    topic = rng.choice(TOPICS)
    stock = rng.choice(STOCKS)
    food = rng.choice(FOODS)
    hobby = rng.choice(HOBBIES)
    org = rng.choice(ORGS_ZH if zh else ORGS_EN)
    ref = f"{REF_PREFIX[i % len(REF_PREFIX)]}{i:07d}"
    li = 1 if zh else 0
    fields = {
        "p": p, "p2": p2, "place": place[li], "topic": topic[li], "stock": stock[0], "sname": stock[1 if zh else 2],
        "food": food[li], "hobby": hobby[li], "org": org, "ref": ref, "n": rng.randrange(10, 2000, 10),
        "price": f"{rng.uniform(5, 2000):.2f}", "pct": f"{rng.uniform(0.5, 9.5):.1f}", "day": rng.choice(DAYS),
        "month": rng.choice(MONTHS), "monthn": rng.randrange(1, 13),
    }
    content = (ZH_TEMPLATES if zh else EN_TEMPLATES)[tpl].format(**fields)
    ents: list[Any] = [{"name": p, "kind": "person"}]
    parts = [f"T:{'zh' if zh else 'en'}{tpl}", *pparts]
    relation = None
    if tpl in (0, 4):
        ents += [{"name": p2, "kind": "person"}, {"name": place[li], "kind": "place"}]
        parts += [*p2parts, f"P:{place[0]}"]
        relation = (p, "met" if tpl == 0 else "owes", p2)
    if tpl in (1, 5):
        ents.append({"name": stock[0], "kind": "stock", "aliases": [stock[1], stock[2]]})
        parts.append(f"K:{stock[0]}")
        if tpl == 1:
            relation = (p, "holds", stock[0])
    if tpl == 2:
        ents.append({"name": place[li], "kind": "place"})
        parts += [f"P:{place[0]}", f"D:{food[0]}", f"H:{hobby[0]}"]
        relation = (p, "lives_near", place[li])
    if tpl == 3:
        ents.append({"name": org, "kind": "org"})
        parts.append(f"O:{org}")
        relation = (p, "works_at", org)
    if tpl in (0, 1, 3, 5):
        parts.append(f"X:{topic[0]}")
    return {"content": content, "tags": [*TAGS[tpl], "zh" if zh else "en"], "entities": ents,
            "source": SOURCES[tpl], "importance": round(rng.uniform(0.2, 0.9), 2), "relation": relation,
            "parts": parts, "lang": "zh" if zh else "en"}


def make_queries(k: int, n_chunks: int, seed: int) -> list[str]:
    """K recall queries over the corpus vocabulary: questions, names, codes, 2-character Chinese words."""
    rng = random.Random(seed + 7)
    out = []
    for j in range(k):
        kind = j % 12
        zh = kind >= 7
        p, _ = _person(rng, zh)
        place, topic, stock = rng.choice(PLACES), rng.choice(TOPICS), rng.choice(STOCKS)
        org = rng.choice(ORGS_ZH if zh else ORGS_EN)
        i = rng.randrange(max(1, n_chunks))
        q = [
            f"Where did {p} meet people to discuss the {topic[0]}?",
            f"How many {stock[2]} shares does {p} hold?",
            f"What food does {p} like?",
            f"Who works at {org}?",
            f"{stock[0]} price drop",
            f"{REF_PREFIX[i % len(REF_PREFIX)]}{i:07d}",
            place[0],
            f"{p}在哪里讨论了{topic[1]}？",
            f"{p}买了哪只股票",
            place[1] if len(place[1]) == 2 else "茅台",
            f"{p}喜欢吃什么",
            f"谁负责{topic[1]}",
        ][kind]
        out.append(q)
    return out


def distinct_queries(k: int, sets: int, n_chunks: int, seed: int, exclude: Iterable[str] = ()) -> list[list[str]]:
    """`sets` lists of K questions, no question twice in or across them nor in `exclude`: the daemon's
    passes each ask new questions, so no cache keyed by a question's text (the per-text caches of rerank
    and relevance) is warm for them. make_queries repeats some kinds (a place name, a stock's price)."""
    seen = set(exclude)
    out: list[str] = []
    for batch in range(1, 100):
        for q in make_queries(k * sets * 2, n_chunks, seed + 1000 * batch):
            if q not in seen:
                seen.add(q)
                out.append(q)
        if len(out) >= k * sets:
            break
    return [out[i * k : (i + 1) * k] for i in range(sets)]


def component_vectors(embedder: Any) -> dict[str, np.ndarray]:
    """Real model embeddings of every part a synthetic vector is composed of (a few hundred strings)."""
    names: dict[str, str] = {}
    for k, tpl in enumerate(EN_TEMPLATES):
        names[f"T:en{k}"] = tpl.replace("{", "").replace("}", "")
    for k, tpl in enumerate(ZH_TEMPLATES):
        names[f"T:zh{k}"] = tpl.replace("{", "").replace("}", "")
    names.update({f"F:{x}": x for x in EN_FIRST})
    names.update({f"L:{x}": x for x in EN_LAST})
    names.update({f"S:{x}": x + "先生" for x in ZH_SUR})
    names.update({f"G:{x}": x for x in ZH_GIVEN})
    names.update({f"P:{en}": f"{en} {zh}" for en, zh in PLACES})
    names.update({f"X:{en}": f"{en} {zh}" for en, zh in TOPICS})
    names.update({f"K:{c}": f"{c} {zh} {en} stock" for c, zh, en in STOCKS})
    names.update({f"D:{en}": f"{en} {zh}" for en, zh in FOODS})
    names.update({f"H:{en}": f"{en} {zh}" for en, zh in HOBBIES})
    names.update({f"O:{o}": o for o in ORGS_EN + ORGS_ZH})
    keys = list(names)
    vecs = embedder.embed_passages([names[k] for k in keys])
    return dict(zip(keys, np.asarray(vecs, dtype=np.float32), strict=True))


def synth_vectors(items: list[dict[str, Any]], comps: dict[str, np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """Unit vectors composed from real component embeddings plus noise: clustered and anisotropic
    like real e5 vectors, without running the model per chunk."""
    dim = next(iter(comps.values())).shape[0]
    out = np.empty((len(items), dim), dtype=np.float32)
    for j, it in enumerate(items):
        parts = it["parts"]
        v = comps[parts[0]] * 1.0
        for p in parts[1:]:
            v = v + 0.6 * comps[p]
        out[j] = v
    out += rng.standard_normal(out.shape).astype(np.float32) * (0.35 / math.sqrt(dim)) * np.linalg.norm(
        out, axis=1, keepdims=True)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out
