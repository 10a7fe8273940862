"""Judge replies as models write them, read by the score parser: the table of tests/evaluation/data/
judge_replies.jsonl (one reply a line: the reply, the provider's finish_reason and refusal, the expected
score or, for an unscored reply, the reason), and the probability-weighted score (G-Eval) of the score
token."""

import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest

from evaluation.scoring import (
    UNSCORED_REASONS,
    JudgeReading,
    compact_logprobs,
    expected_score,
    parse_judge_score,
    read_judge_score,
)

TABLE = Path(__file__).parent / "data" / "judge_replies.jsonl"
ROWS = [json.loads(line) for line in TABLE.read_text(encoding="utf-8").splitlines() if line.strip()]
LIST_OPENER = re.compile(r"\s*(?:[-*]\s*)?(\d+)\s*(?:[.)](?!\d)|/(?=\s))\s*\S")


def _id(row: dict) -> str:
    return f"{row['id']}-{row['family']}-{row['finish_reason']}"


@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_it_reads_each_reply_of_the_table_as_expected(row):
    reading = read_judge_score(row["reply"], finish_reason=row["finish_reason"], refusal=row.get("refusal", ""))

    assert (reading.score, reading.reason) == (row["score"], row["reason"])
    if reading.score is not None:
        # The number read is where the parser says it is: the token found there is weighted.
        assert float(row["reply"][reading.start : reading.end].replace(",", ".")) == reading.score


def test_it_holds_enough_realistic_replies_with_a_reason_for_every_unscored_one():
    assert len(ROWS) >= 200
    assert {row["lang"] for row in ROWS} >= {"vi", "en"}
    families = Counter(row["family"].split("-")[0] for row in ROWS)
    assert {"gpt", "claude", "llama", "qwen2.5", "qwen3", "gemma", "mistral", "smollm2"} <= set(families)
    unscored = [row for row in ROWS if row["score"] is None]
    assert all(row["reason"] in UNSCORED_REASONS for row in unscored)
    assert {row["reason"] for row in unscored} == set(UNSCORED_REASONS)
    assert all(row["reason"] == "" for row in ROWS if row["score"] is not None)
    assert Counter(row["score"] for row in ROWS if row["score"] is not None).keys() == {0, 1, 2, 3, 4, 5}
    assert sum(row["finish_reason"] == "length" for row in ROWS) >= 25
    # The forms the issue names, each present.
    replies = {row["reply"] for row in ROWS}
    assert {"4/5", "4 out of 5", "8/10", "Score: 4.5", "3 con mèo"} <= replies


def test_it_never_reads_the_number_that_opens_a_list_item():
    assert read_judge_score("1. Kim chỉ có đ", finish_reason="length") == JudgeReading(None, "cut_off")
    assert read_judge_score("1. Kim chỉ có đ").reason == "list_number"
    assert parse_judge_score("3 con mèo") is None
    opening = [(row, match) for row in ROWS if (match := LIST_OPENER.match(row["reply"]))]
    assert len(opening) >= 20
    for row, match in opening:
        reading = read_judge_score(row["reply"], finish_reason=row["finish_reason"], refusal=row.get("refusal", ""))
        assert reading.start != match.start(1), row["reply"]


def test_it_reads_the_same_reply_the_same_without_the_finish_reason_when_the_verdict_was_written():
    for row in ROWS:
        if row["finish_reason"] == "length" and row["score"] is not None:
            assert parse_judge_score(row["reply"]) == row["score"], row["reply"]


# --- probability-weighted scores -----------------------------------------------------------------


def _entry(token: str, alternatives: dict[str, float] | None = None) -> dict:
    top = alternatives or {token: -0.01}
    return {
        "token": token,
        "logprob": top.get(token, -0.01),
        "top": [{"token": t, "logprob": lp} for t, lp in sorted(top.items(), key=lambda kv: -kv[1])],
    }


def _weighted(probabilities: dict[int, float]) -> float:
    total = sum(probabilities.values())
    return sum(s * p for s, p in probabilities.items()) / total


def test_it_weights_the_score_token_by_the_probabilities_of_zero_to_five():
    reply = "Điểm: 4\nGiải thích: đúng ý chính."
    alternatives = {" 4": math.log(0.6), " 3": math.log(0.25), " 5": math.log(0.1), " The": math.log(0.05)}
    logprobs = [
        _entry("Điểm"),
        _entry(":"),
        _entry(" 4", alternatives),
        _entry("\n"),
        _entry("Giải thích: đúng ý chính."),
    ]

    expected, probabilities = expected_score(logprobs, reply, read_judge_score(reply))

    # The six score tokens renormalised: " The" drops out.
    assert expected == pytest.approx(_weighted({4: 0.6, 3: 0.25, 5: 0.1}))
    assert probabilities == pytest.approx([0, 0, 0, 0.25 / 0.95, 0.6 / 0.95, 0.1 / 0.95])
    assert sum(probabilities) == pytest.approx(1.0)


def test_it_finds_the_verdicts_token_not_a_criterions_nor_the_denominator():
    reply = "1. Độ chính xác: 5/5\nĐộ tương đồng tổng thể: 3/5"
    tokens = ["1", ".", " Độ chính xác", ":", " 5", "/", "5", "\n", "Độ tương đồng tổng thể", ":", " 3", "/", "5"]
    verdict = {" 3": math.log(0.5), " 2": math.log(0.5)}
    logprobs = [_entry(t, verdict if i == 10 else {t: -0.01, "0": -4.6}) for i, t in enumerate(tokens)]

    expected, _ = expected_score(logprobs, reply, read_judge_score(reply))

    assert expected == pytest.approx(2.5)


def test_it_adds_the_variants_of_a_score_token_and_the_chosen_token_outside_the_top():
    reply = "4"
    entry = {
        "token": "4",
        "logprob": math.log(0.3),
        "top": [{"token": " 4", "logprob": math.log(0.2)}, {"token": "**5", "logprob": math.log(0.5)}],
    }

    expected, probabilities = expected_score([entry], reply, read_judge_score(reply))

    assert probabilities[4] == pytest.approx(0.5) and probabilities[5] == pytest.approx(0.5)
    assert expected == pytest.approx(4.5)


def test_it_finds_the_token_when_the_tokens_do_not_spell_the_reply():
    # A Vietnamese letter split between two tokens decodes as U+FFFD: the digit's token is found by place.
    reply = "Độ tương đồng: 4/5"
    logprobs = [
        _entry("\ufffd"),
        _entry("\ufffdộ tương đồng"),
        _entry(":"),
        _entry(" 4", {" 4": math.log(0.9), " 5": math.log(0.1)}),
        _entry("/"),
        _entry("5"),
    ]

    expected, _ = expected_score(logprobs, reply, read_judge_score(reply))

    assert expected == pytest.approx(4.1)


def test_it_gives_no_weighted_score_without_logprobs_a_score_or_a_lone_digit_token():
    reply = "Điểm: 4"
    assert expected_score(None, reply, read_judge_score(reply)) is None
    assert expected_score([_entry("Điểm: 4")], reply, read_judge_score(reply)) is None  # "Điểm: 4" is no digit
    assert expected_score([_entry("3 con mèo")], "3 con mèo", read_judge_score("3 con mèo")) is None


def test_it_keeps_the_alternatives_of_score_tokens_only():
    logprobs = [_entry("Điểm", {"Điểm": -0.1, "Score": -2.0}), _entry(":"), _entry(" 4", {" 4": -0.1, " 3": -2.3})]

    compact = compact_logprobs(logprobs)

    assert [entry["token"] for entry in compact] == ["Điểm", ":", " 4"]
    assert compact[0]["top"] == [] and len(compact[2]["top"]) == 2
    reply = "Điểm: 4"
    assert expected_score(compact, reply, read_judge_score(reply)) == expected_score(
        logprobs, reply, read_judge_score(reply)
    )
