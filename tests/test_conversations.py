"""Conversations: the LoCoMo evaluation's calling convention, threads, context vectors, time grounding."""

from __future__ import annotations

from typing import Any

from commands import eval_locomo

SAMPLE: dict[str, Any] = {  # a made-up conversation in LoCoMo's file format (not LoCoMo data)
    "sample_id": "toy",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_2_date_time": "3:00 pm on 9 May, 2023",
        "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "Back again."}],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I went to the pottery class yesterday."},
                      {"speaker": "Bo", "dia_id": "D1:2", "text": " "}],
    },
    "qa": [],
}


def test_locomo_turns_follow_the_black_box_convention() -> None:
    turns = eval_locomo.turns_of(SAMPLE)
    assert [t["dia_id"] for t in turns] == ["D1:1", "D2:1"]  # sessions in order, empty turns dropped
    first = turns[0]
    assert first["content"] == "Ann: I went to the pottery class yesterday."
    assert first["session"] == 1 and first["speaker"] == "Ann"
    assert first["session_date"] == "1:56 pm on 8 May, 2023"
    assert first["valid_from"] == "2023-05-08T13:56:00+00:00"
    assert eval_locomo.SOURCE == "locomo"
