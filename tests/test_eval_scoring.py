"""The pure scoring of the dev-set evals: per-conversation tables, the ship rule, seen/unseen splits.

Small made-up answers, never LoCoMo: what is checked is the arithmetic and the verdict.
"""

from __future__ import annotations

import json

import pytest

from devtools import eval_bilingual, eval_locomo


def _q(ns: str, evidence: list[str], got: list[str]) -> dict:
    return {"namespace": ns, "category": 4, "evidence": evidence, "got": got}


ANSWERS = [
    _q("conv-a", ["D1:1"], ["D1:1", "D1:2"]),  # rank 1
    _q("conv-a", ["D1:3", "D2:1"], ["D1:2", "D2:1"]),  # rank 2, half the evidence
    _q("conv-b", ["D3:4"], ["D1:1"] * 10),  # not found
]


def test_per_conversation_and_pool() -> None:
    convs = eval_locomo.by_conversation(ANSWERS)
    assert list(convs) == ["conv-a", "conv-b"]
    assert convs["conv-a"]["n"] == 2
    assert convs["conv-a"]["any@1"] == 0.5
    assert convs["conv-a"]["any@10"] == 1.0
    assert convs["conv-a"]["frac@10"] == 0.75
    assert convs["conv-a"]["mrr"] == 0.75
    assert convs["conv-b"]["any@10"] == 0.0
    assert convs["conv-b"]["mrr"] == 0.0
    pool = eval_locomo.score(ANSWERS)
    assert pool["any@10"] == pytest.approx(2 / 3)
    assert pool["mrr"] == pytest.approx(0.5)
    text = eval_locomo.conversation_table(convs, pool)
    assert "conv-b" in text and "pool" in text


def _run(pool: float, convs: dict[str, float]) -> dict:
    """A saved run where every metric of a conversation (and of the pool) is the same number."""
    metrics = dict.fromkeys(eval_locomo.CONV_COLS)
    return {"overall": {k: pool for k in metrics},
            "by_conversation": {ns: {k: v for k in metrics} for ns, v in convs.items()}}


def test_ship_rule_pool_gain_and_bounded_loss() -> None:
    old = _run(0.50, {"a": 0.50, "b": 0.50})
    ships, reasons = eval_locomo.ship_verdict(_run(0.52, {"a": 0.56, "b": 0.48}), old)
    assert ships and reasons == []  # b loses exactly 0.02: allowed
    ships, reasons = eval_locomo.ship_verdict(_run(0.52, {"a": 0.57, "b": 0.47}), old)
    assert not ships and any(r.startswith("b any@1") for r in reasons)
    ships, reasons = eval_locomo.ship_verdict(_run(0.50, {"a": 0.50, "b": 0.50}), old)
    assert not ships and "no gain" in reasons[0]  # the pool must gain, not merely hold


def test_ship_rule_needs_the_same_conversations() -> None:
    ships, reasons = eval_locomo.ship_verdict(_run(0.6, {"a": 0.6}), _run(0.5, {"a": 0.5, "b": 0.5}))
    assert not ships and reasons == ["b: in only one of the two runs"]


def test_compare_two_saved_runs(tmp_path, capsys) -> None:
    new, old = tmp_path / "new.json", tmp_path / "old.json"
    new.write_text(json.dumps(_run(0.55, {"a": 0.60, "b": 0.49})))
    old.write_text(json.dumps(_run(0.50, {"a": 0.50, "b": 0.50})))
    assert eval_locomo.main(["--compare", str(new), "--baseline", str(old)]) == 0
    out = capsys.readouterr().out
    assert "SHIPS" in out and "DOES NOT" not in out
    assert "+0.100" in out and "-0.010" in out
    with pytest.raises(SystemExit):
        eval_locomo.main(["--compare", str(new)])  # no baseline to compare with


def test_bilingual_foreign_is_a_hit_only_without_hits() -> None:
    assert eval_bilingual.rank_of([], []) == 1
    assert eval_bilingual.rank_of(["m1"], []) is None
    assert eval_bilingual.rank_of(["m2", "m1"], ["m1"]) == 2


def test_bilingual_unseen_is_skipped_and_reported_apart() -> None:
    queries = [{"id": "q1", "kind": "paraphrase", "lang": "en", "expect": ["m1"]},
               {"id": "q2", "kind": "foreign", "lang": "zh", "expect": []},
               {"id": "q3", "kind": "paraphrase", "lang": "en", "expect": ["m1"], "unseen": True}]
    assert [q["id"] for q in eval_bilingual.asked(queries, unseen=False)] == ["q1", "q2"]
    answers = [{**q, "got": got} for q, got in zip(eval_bilingual.asked(queries, unseen=True),
                                                   (["m1"], [], ["m9"]), strict=True)]
    metrics = eval_bilingual.grouped(answers)
    assert metrics["overall"]["top1"] == 1.0 and metrics["overall"]["n"] == 2
    assert metrics["unseen overall"]["top1"] == 0.0 and metrics["unseen overall"]["n"] == 1
    assert metrics["kind foreign"]["top10"] == 1.0
    assert "unseen kind paraphrase" in metrics
    assert list(metrics).index("overall") < list(metrics).index("unseen kind paraphrase")
