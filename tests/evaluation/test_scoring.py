"""Reading judge scores and scoring the classification answers exactly as the paper."""

import unicodedata

import pytest

from evaluation.scoring import (
    exact_match,
    normalise_topic,
    normalise_traits,
    parse_judge_score,
    score_classification,
)

READABLE = [
    ("4", 4),
    (" 4/5", 4),
    ("4/5\n", 4),
    ("0/5", 0),
    ("5/5", 5),
    ("4.0", 4),
    ("4,0", 4),
    ("**5**", 5),
    ("`3`", 3),
    ("3.", 3),
    ("4 điểm", 4),
    ("Điểm: 0", 0),
    ("Score: 3", 3),
    ("score = 2", 2),
    ("Độ tương đồng tổng thể: 4/5", 4),
    ("Độ tương đồng tổng thể: 4", 4),
    ("Độ tương đồng tổng thể: 4/", 4),  # cut by max_tokens=10
    ("**Độ tương đồng tổng thể:** 2", 2),
    ("ĐIỂM: 1", 1),
    ("Tiêu chí 1: 3/5 ... Độ tương đồng tổng thể: 4/5", 4),
    (
        "1. Độ chính xác của ý nghĩa cốt lõi: 3/5\n2. Khả năng nắm bắt sắc thái, ngữ cảnh, ẩn ý: 2/5\n"
        "3. Chất lượng diễn đạt, sự rõ ràng, lưu loát: 5/5\n4. Độ đầy đủ: 3/5\nĐộ tương đồng tổng thể: 3/5",
        3,
    ),
    (
        "Giải thích gốc nói về sự bạc bẽo. Giải thích của LLM chỉ hiểu nghĩa đen nên ý nghĩa cốt lõi chỉ đạt "
        "khoảng 1/5, diễn đạt thì rõ ràng (4/5). Vậy điểm là 2.",
        2,
    ),
    (
        "Bước 1: ý nghĩa cốt lõi là lòng biết ơn.\nBước 2: LLM nắm đúng ý chính, đạt 4/5 về độ chính xác.\n"
        "Bước 3: thiếu ý về tổ tiên, độ đầy đủ 3/5.\nĐiểm: 4",
        4,
    ),
    ("Suy luận: giải thích sai hoàn toàn ý nghĩa (thang 0–5 điểm).\n0", 0),
    ("Tôi cho 5 điểm.", 5),
    ("- Điểm: 4", 4),
    ("Score: 4/5\nThe explanation captures the core meaning but misses the nuance.", 4),
    ("Đánh giá: tốt.\nĐiểm số cuối cùng: **3**", 3),
    (unicodedata.normalize("NFD", "Điểm: 2"), 2),
    ("5 (Rất tương đồng)", 5),
    ("4 - đúng ý chính nhưng thiếu sắc thái", 4),
    ("Câu trả lời: 4", 4),
]

UNSCORED = [
    "",
    "   \n ",
    None,
    "không có điểm",
    "Tôi không thể đánh giá giải thích này.",
    "7/10",
    "Điểm: 7/10",
    "10/10",
    "7",
    "-1",
    "Score: 6",
    "4.5",
    "Điểm: 3 hoặc 4",
    "Khoảng 3 đến 4 điểm",
    "Tiêu chí 1: 3/5\nTiêu chí 2: 4/5\nNhìn chung giải thích khá tốt.",
    "Thang điểm (0–5 điểm) được áp dụng.",
    "7 (tốt)",
    "4 5",
    "1. Độ chính xác: tốt\n2. Độ đầy đủ: thiếu",
]


@pytest.mark.parametrize(("reply", "score"), READABLE)
def test_it_reads_the_score_a_judge_gives(reply, score):
    assert parse_judge_score(reply) == score


@pytest.mark.parametrize("reply", UNSCORED)
def test_it_leaves_a_reply_without_a_readable_score_unscored(reply):
    assert parse_judge_score(reply) is None


def test_it_covers_enough_forms_and_never_invents_a_zero():
    assert len(READABLE) + len(UNSCORED) >= 25
    unreadable = [reply for reply in UNSCORED if parse_judge_score(reply) == 0]
    assert unreadable == []
    # The same scores all along, without a final line, are still one reading.
    assert parse_judge_score("Độ chính xác: 4/5\nĐộ tương đồng tổng thể: 4/5\nHết.") == 4


@pytest.mark.parametrize(
    ("reply", "prediction"),
    [
        ("3", "3"),
        (" 3\n", "3"),
        ("“3”", "3"),
        ("'3'", "3"),
        ("3.", "3."),
        ("Đáp án: 3", "Đáp án: 3"),
        ("", ""),
        (None, ""),
    ],
)
def test_it_normalises_a_topic_answer_by_stripping_only_whitespace_and_quotes(reply, prediction):
    assert normalise_topic(reply) == prediction


@pytest.mark.parametrize(
    ("reply", "gold", "correct"),
    [
        ("1,3", "1,3", True),
        (" 1,3\n", "1,3", True),
        ('"1,3,5"', "1,3,5", True),
        ("1, 3", "1,3", False),  # an added character: the paper penalises it
        ("3,1", "1,3", False),  # reordering is not forgiven
        ("1,3,", "1,3", False),
        ("", "", True),  # an empty answer means no trait
        ("“”", "", True),  # Fig. 10 writes the empty answer as “”
        ('""', "", True),
        ("  ", "", True),
        ("0", "", False),
        ("Không có", "", False),
        ("1,3", "", False),
        ("", "2", False),
    ],
)
def test_it_scores_traits_by_exact_match_on_the_stripped_reply(reply, gold, correct):
    prediction = normalise_traits(reply)
    assert exact_match(prediction, gold) is correct
    assert score_classification("traits", reply, gold) == (prediction, correct)


def test_it_scores_topics_by_exact_match():
    assert score_classification("topic", " 4 ", "4") == ("4", True)
    assert score_classification("topic", "4.", "4") == ("4.", False)
    assert score_classification("topic", "Chủ đề 4", "4") == ("Chủ đề 4", False)
    assert exact_match("7", "7") and not exact_match("7", "1")
    with pytest.raises(ValueError):
        score_classification("sentiment", "1", "1")
