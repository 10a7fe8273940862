"""Reading judge scores and scoring classification answers (VIVID paper, section 4 and Appendix B).

A judge reply that holds no readable score is *unscored* (None), never 0: a 0 is a verdict
("wrong meaning"), an unreadable reply is a failure of the judge, and mixing them would bias
every mean in Tables 3-4 downwards.
"""

from __future__ import annotations

import re
import unicodedata

SCORE_MIN, SCORE_MAX = 0, 5

# Not one end of a range: "0–5 điểm" and "(0-5)" are the scale, not a score.
_NOT_AFTER = r"(?<![\d.,\-–—/])"
_NOT_BEFORE = r"(?![\d]|[.,]\d*[1-9]|\s*[-–—]\s*\d)"
_NUMBER = r"(-?\d+(?:[.,]0+)?)"

_FRACTION = re.compile(_NOT_AFTER + r"(-?\d+(?:[.,]\d+)?)\s*/\s*(\d+)(?![\d.,]*\d)")
_LABELLED = re.compile(
    r"(?:điểm|score|rating|overall|tổng thể|kết luận|kết quả|đánh giá|chấm|trả lời|đáp án|answer)"
    r"[^\d\n]{0,30}?" + _NOT_AFTER + _NUMBER + r"(?!\s*/\s*\d)" + _NOT_BEFORE
)
_POINTS = re.compile(_NOT_AFTER + _NUMBER + _NOT_BEFORE + r"\s*(?:điểm|points?)\b")
_BARE = re.compile(r"^(?:[^\w\-]|-(?!\d))*" + _NUMBER + r"(?:\s*/\s*(\d+))?\s*(?:điểm|points?)?\W*$")
# "5 (Rất tương đồng)", "4 - đúng ý chính": a one-line reply that opens with its score.
_LEADING = re.compile(r"^(?:[^\w\-]|-(?!\d))*" + _NUMBER + _NOT_BEFORE + r"(?!\s*/)\s*[-–—:(.,]?\s+\D")
_ALTERNATIVES = re.compile(r"\d\s*(?:hoặc|hay|or|đến|tới|to)\s*\d")
_MARKUP = re.compile(r"[*_`#>]+")

_INVALID = object()


def _value(number: str, denominator: str | None = None):
    """An in-range integer, or _INVALID for a number that is not a 0-5 score."""
    if denominator is not None and int(denominator) != SCORE_MAX:
        return _INVALID
    number = number.replace(",", ".")
    try:
        value = float(number)
    except ValueError:
        return _INVALID
    if not value.is_integer() or not SCORE_MIN <= value <= SCORE_MAX:
        return _INVALID
    return int(value)


def _mentions(text: str) -> list[tuple[int, object]]:
    """Score-like mentions as (position of the number, value or _INVALID), in reading order."""
    found: dict[int, object] = {}
    for match in _LABELLED.finditer(text):
        found[match.start(1)] = _value(match.group(1))
    for match in _POINTS.finditer(text):
        found[match.start(1)] = _value(match.group(1))
    # A fraction decides for its numerator: "4/10" is invalid even after a label.
    for match in _FRACTION.finditer(text):
        found[match.start(1)] = _value(match.group(1), match.group(2))
    return sorted(found.items())


def _bare(line: str):
    match = _BARE.match(line)
    if not match:
        return None
    return _value(match.group(1), match.group(2))


def _clean(reply: str) -> str:
    # Casefolding can decompose a precomposed Vietnamese letter: compose again after it.
    text = unicodedata.normalize("NFC", unicodedata.normalize("NFC", reply).casefold())
    return _MARKUP.sub("", text)


def parse_judge_score(reply: str | None) -> int | None:
    """The integer 0-5 a judge reply gives, or None when no score can be read.

    Accepted: a bare number ("4", "4.0", "**5**"), a fraction of 5 ("4/5"), a labelled score
    ("Score: 3", "Điểm: 0", "Độ tương đồng tổng thể: 4/5"), "N điểm". When the reply reasons
    first (CoT, the aspect rubric), the last line that mentions a score decides, and within it
    the last mention, so "Tiêu chí 1: 3/5 ... Độ tương đồng tổng thể: 4/5" reads 4.

    None: nothing score-like; a number outside 0-5 or not an integer; a fraction of anything
    but 5 ("7/10"); a final line that offers alternatives ("3 hoặc 4"); and a reply whose
    scores disagree with no final line deciding between them.
    """
    if not reply or not reply.strip():
        return None
    lines = [line.strip() for line in _clean(reply).splitlines() if line.strip()]
    if not lines:
        return None
    if len(lines) == 1 and (bare := _bare(lines[0])) is not None:
        return None if bare is _INVALID else bare

    last = lines[-1]
    if _ALTERNATIVES.search(last):
        return None
    mentions = _mentions(last)
    if mentions:
        value = mentions[-1][1]
        return None if value is _INVALID else value
    bare = _bare(last)
    if bare is not None:
        return None if bare is _INVALID else bare

    if len(lines) == 1 and (leading := _LEADING.match(last)):
        value = _value(leading.group(1))
        return None if value is _INVALID else value

    # No final verdict: only a reply whose every score agrees can be read.
    values = {value for line in lines for _position, value in _mentions(line)}
    if len(values) == 1 and _INVALID not in values:
        return values.pop()
    return None


# --- classification --------------------------------------------------------------------------

# Quotes a model may wrap its answer in; Fig. 10 itself writes the empty answer as “”.
_QUOTES = "\"'`“”‘’«»"


def _strip(reply: str | None) -> str:
    """Whitespace and surrounding quotes only.

    Nothing inside the answer is forgiven: the paper's exact-match scoring "penalises any
    deviation from the gold label, including reordering or additional characters", so
    "1, 3", "3,1", "3." and "Đáp án: 3" are all wrong.
    """
    text = unicodedata.normalize("NFC", reply or "")
    previous = None
    while text != previous:
        previous = text
        text = text.strip()
        if len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
            text = text[1:-1]
    return text


def normalise_topic(reply: str | None) -> str:
    """The topic prediction as compared with the gold "1".."7"."""
    return _strip(reply)


def normalise_traits(reply: str | None) -> str:
    """The traits prediction as compared with the gold "1,3,5" ("" means no trait)."""
    return _strip(reply)


def exact_match(prediction: str, gold: str) -> bool:
    return prediction == gold


def score_classification(task: str, reply: str | None, gold: str) -> tuple[str, bool]:
    """(normalised prediction, correct) for a topic or traits reply."""
    if task == "topic":
        prediction = normalise_topic(reply)
    elif task == "traits":
        prediction = normalise_traits(reply)
    else:
        raise ValueError(f"unknown classification task {task!r}")
    return prediction, exact_match(prediction, gold)


# --- pairwise judging --------------------------------------------------------------------------

_POSITION = re.compile(r"(?<![\d.,])([12])(?![\d]|[.,]\d)")


def parse_pairwise_choice(reply: str | None) -> int | None:
    """The position a pairwise judge prefers, 1 or 2, or None when the reply does not say.

    The last line that names a position decides ("1", "Giải thích 2 tốt hơn", "**2**"); a line
    naming both ("1 hoặc 2", "cả 1 và 2") decides nothing, as for a score.
    """
    if not reply or not reply.strip():
        return None
    for line in reversed([line.strip() for line in _clean(reply).splitlines() if line.strip()]):
        found = {int(match.group(1)) for match in _POSITION.finditer(line)}
        if len(found) == 1:
            return found.pop()
        if found:
            return None
    return None
