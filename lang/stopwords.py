"""Stop words of English and Chinese queries (lang/query_plan.py, lang/crosslingual.py)."""

from __future__ import annotations

# Function words and question words: they match nearly every memory, so they only add noise.
EN_STOP = frozenset(
    """a an the is are was were be been being am do does did done of to in on at by for with from and or but nor
    not no it its it's this that these those i me my mine myself we us our ours you your yours he him his she her
    hers they them their theirs what when where who whom whose which why how there here as if so than then too
    very can could would should will shall may might must have has had having about into over after before
    again once also just any some all each other such only own same both few more most s t don doesn didn isn
    aren wasn weren tell know please ever get got go going went make made let say said like one thing things
    kind sort anything something way lot lots really much many long often usually current currently now nowadays
    today days latest recently recent still yet ago already even well back up out off down via per
    happen happened think thought want wanted need needed use used using did does doing i'm i've i'd you're
    we're that's what's when's where's who's how's mr mrs ms""".split()
)
ZH_STOP = frozenset(
    """的 了 是 在 吗 呢 吧 啊 呀 嘛 和 与 及 或 也 都 就 还 又 再 我 你 他 她 它 我们 你们 他们 她们 咱们 自己 这 那 哪 哪里 哪儿 哪个
    哪些 哪家 哪位 哪类 哪种 哪只 哪一 什么 什么样 怎么 怎样 怎么样 如何 为什么 为啥 多少 多久 几 几个 几点 几号 几岁 谁 一个 一些 有 没有 有没有
    是不是 是否 把 被 对 从 到 给 让 上 下 中 里 个 么 去 过 着 会 能 要 想 说 请 问 现在 目前 最近 如今 之前 以前 后来 这次 那次
    那个 这个 那些 这些 分别 一下 一般 平时 还是 可以 应该 需要 用 做 在哪 是什么 有什么 吗 呢 最后 当时 已经 所以 因为 但是 而且
    以及 还有 并且 其中 之后 以后 当前 这周 本周 时候 什么时候 情况 东西 方面 相关""".split()
)
