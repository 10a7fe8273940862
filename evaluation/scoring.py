"""Reading judge scores and scoring classification answers (VIVID paper, section 4 and Appendix B).

A judge reply that holds no readable score is *unscored* (None), never 0: a 0 is a verdict
("wrong meaning"), an unreadable reply is a failure of the judge, and mixing them would bias
every mean in Tables 3-4 downwards. An unscored reply keeps its reason (``UNSCORED_REASONS``).

The judge parser has a version (``PARSER_VERSION``), stored with every score it reads, so a
fix can be applied to old runs from their stored replies (``reparse_scores``) without asking
the model again.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _

# Re-exported: the runs and their tests score classification replies through this module.
from .answers import exact_match, normalise_topic, normalise_traits, score_classification  # noqa: F401

SCORE_MIN, SCORE_MAX = 0, 5

# 1: the first parser. 2: finish_reason, list numbers,
# glossed leading numbers, verdict labels over criterion scores, reasons for unscored replies.
PARSER_VERSION = 2

# Why a judge reply has no score, by code (the code is stored; the text is shown).
UNSCORED_REASONS = {
    "empty": _("empty reply"),
    "refusal": _("the model refused to judge"),
    "cut_off": _("cut off by the token limit before a verdict"),
    "list_number": _("only list numbers, no verdict"),
    "not_a_verdict": _("a leading number in ordinary text, not a verdict"),
    "out_of_range": _("a number outside 0-5"),
    "not_integer": _("not a whole number"),
    "other_scale": _("a score on another scale than 0-5"),
    "alternatives": _("a range or alternatives, not one score"),
    "conflicting": _("several different scores and no final verdict"),
    "no_score": _("no score in the reply"),
}


@dataclass(frozen=True)
class JudgeReading:
    """What the parser read from one reply: the score or the reason there is none, and where
    the score's number starts and ends in the reply as given (for its token's probabilities)."""

    score: int | None
    reason: str = ""
    start: int | None = None
    end: int | None = None


# --- the reply as the parser reads it ----------------------------------------------------------

# Reasoning a model wraps in tags (Qwen3, DeepSeek-R1): its numbers are drafts, not the verdict.
_THINK = re.compile(r"<(think|thinking|reasoning)>.*?(?:</\1>|\Z)", re.IGNORECASE | re.DOTALL)
_MARKUP = frozenset("*_`#>~|")


def _clusters(reply: str) -> list[tuple[int, str]]:
    """(index in the reply, NFC text) per base character with its combining marks."""
    out: list[tuple[int, str]] = []
    start = 0
    for index in range(1, len(reply) + 1):
        if index == len(reply) or not unicodedata.combining(reply[index]):
            out.append((start, unicodedata.normalize("NFC", reply[start:index])))
            start = index
    return out


def _readable(reply: str) -> tuple[str, list[int]]:
    """The reply composed, casefolded, without markup and reasoning tags, and for each of its
    characters the index in the reply it came from (scores are found in the first, located in
    the second)."""
    composed, origin = [], []
    for index, text in _clusters(reply):
        for char in text:
            composed.append(char)
            origin.append(index)
    composed_text = "".join(composed)
    hidden = set()
    for match in _THINK.finditer(composed_text):
        hidden.update(range(match.start(), match.end()))
    chars, where = [], []
    for position, char in enumerate(composed_text):
        if position in hidden:
            continue
        # Markup becomes a space: "<score>4" and "**4**/5" keep their number apart from the words.
        folded = " " if char in _MARKUP else unicodedata.normalize("NFC", char.casefold())
        for part in folded:
            chars.append(part)
            where.append(origin[position])
    return "".join(chars), where


# --- patterns over the readable reply (casefolded, markup as spaces) ---------------------------

_S = r"[ \t]*"
_NUM = r"(-?\d+(?:[.,]\d+)?)"
# Not one end of a range or a scale: "0–5 điểm", "(0-5)" and "3 đến 4" give no score.
_NOT_AFTER = (
    r"(?<![\w.,\-–—/~])(?<!đến )(?<!tới )(?<!to )(?<!or )(?<!hoặc )(?<!hay )"
    # Nor the scale's top: "4 trên thang điểm 5", "on a scale of 5".
    r"(?<!thang điểm )(?<!thang )(?<!scale of )(?<!out of )(?<!trên )"
)
_NOT_BEFORE = r"(?!\d|[.,]\d|" + _S + r"(?:-|–|—|~|đến|tới|to|hoặc|hay|or)" + _S + r"\d)"
_DENOMINATOR = r"(\d+(?:[.,]\d+)?)(?!\d)"
_OUT_OF = r"(?:out of|trên|over)" + _S + r"(?:(?:thang|tổng)" + _S + r"(?:điểm" + _S + r")?)?"
_POINTS_WORD = r"(?:điểm|points?|pts)(?!\w)"

_LABEL = (
    r"(?<!\w)(?:điểm|score|rating|rated?|overall|tổng thể|kết luận|kết quả|đánh giá|chấm|trả lời|đáp án|answer"
    r"|verdict|final|grade|give[sn]?|tôi (?:sẽ )?cho|mức|评分|分数|得分|总分)"
)
# Between a label and its number: words, or the scale itself ("Score (0-5): 4").
_GAP = r"(?:[^\d\n]|(?<!\d)0" + _S + r"(?:-|–|—|đến|to)" + _S + r"5(?!\d)){0,30}?"
_LABELLED = re.compile(
    _LABEL + _GAP + _NOT_AFTER + _NUM + _NOT_BEFORE + r"(?!" + _S + r"/" + _S + r"\d)(?!" + _S + _OUT_OF + r"\d)"
)
_NO_ALTERNATIVE = r"(?!" + _S + r"(?:-|–|—|~|đến|tới|to|hoặc|hay|or)" + _S + r"\d)"
_FRACTION = re.compile(_NOT_AFTER + _NUM + _S + r"/" + _S + _DENOMINATOR + _NO_ALTERNATIVE)
_OUT_OF_RE = re.compile(_NOT_AFTER + _NUM + _S + _OUT_OF + _DENOMINATOR + _NO_ALTERNATIVE)
_POINTS = re.compile(_NOT_AFTER + _NUM + _NOT_BEFORE + r"(?!" + _S + r"/)" + _S + _POINTS_WORD)
_BARE = re.compile(
    r"^(?:[^\w\-]|-(?!\d))*"
    + _NUM
    + r"(?:"
    + _S
    + r"(?:/|"
    + _OUT_OF
    + r")"
    + _S
    + _DENOMINATOR
    + r")?"
    + _S
    + r"(?:"
    + _POINTS_WORD
    + r")?[^\w]*$"
)
# "5 (Rất tương đồng)", "4 - đúng ý chính": a score glossed with the scale's wording; "3 con mèo" is not.
_LEADING = re.compile(
    r"^(?:[^\w\-]|-(?!\d))*"
    + _NUM
    + _NOT_BEFORE
    + r"(?!"
    + _S
    + r"[/.)])(?P<sep>"
    + _S
    + r"[-–—:(,]"
    + _S
    + r"|\s+)(?P<rest>\S.*)$"
)
_LIST_ITEM = re.compile(r"^(?:[-+•·]" + _S + r")?\d{1,2}" + _S + r"(?:[.)]|/(?=\s))" + _S + r"\S")
_NUMBERS_ONLY = re.compile(r"^[^\w]*\d+(?:[^\w]+\d+)+[^\w]*$")
_PERCENT = re.compile(_S + r"%")
_RANGE = re.compile(
    r"(?<![\w.,])(\d+(?:[.,]\d+)?)(?:"
    + _S
    + r"/"
    + _S
    + r"5)?"
    + _S
    + r"(?:-|–|—|~|đến|tới|to|hoặc là|hoặc|hay|or)"
    + _S
    + r"(\d+(?:[.,]\d+)?)(?![\d])"
    + r"|(?:between|giữa)"
    + _S
    + r"(\d+)"
    + _S
    + r"(?:and|và)"
    + _S
    + r"(\d+)"
)
_GLOSS = re.compile(
    r"(?<!\w)(?:rất|hoàn toàn|tương đồng|chính xác|đúng|sai|tốt|kém|khá|đầy đủ|thiếu|hợp lý|phù hợp|trung bình"
    r"|một phần|lệch|nắm bắt|ý chính|xuất sắc|tạm|ổn|similar|accurate|inaccurate|correct|incorrect|wrong|good"
    r"|excellent|poor|fair|partial|partially|mostly|complete|incomplete|captures?|miss(?:es|ing)?|perfect"
    r"|adequate|weak|strong|close|identical|match(?:es)?|meaning|very|somewhat)(?!\w)"
)
# A number right after these counts criteria, steps or examples: "Tiêu chí 1", "Step 2", "#3".
_INDEX_BEFORE = re.compile(
    r"(?:(?<!\w)(?:tiêu chí|criterion|criteria|bước|step|ví dụ|example|mục|item|câu|phần|part|no\.)|#)" + _S + r"$"
)
_OVERALL = re.compile(
    r"tổng thể|overall|final|cuối cùng|tổng kết|nhìn chung|chung cuộc|kết luận|verdict|tổng điểm|total"
)
_CRITERION = re.compile(
    r"tiêu chí|criteri|chính xác|sắc thái|ngữ cảnh|ẩn ý|diễn đạt|rõ ràng|lưu loát|đầy đủ|cốt lõi|khía cạnh"
    r"|accura|nuance|context|fluen|clarity|completeness|coheren|relevan|aspect"
)
_VERDICT_WORD = re.compile(
    r"điểm|score|rating|rate|grade|đánh giá|kết quả|đáp án|answer|trả lời|chấm|give|(?<!\w)cho(?!\w)|mức"
)
_FOR_CRITERION = re.compile(r"^" + _S + r"(?:về|cho|for|on|in|ở)(?!\w)")
_CLAUSE_BREAK = re.compile(r"[.;!?](?=\s)|,")
_REFUSAL = re.compile(
    r"i can(?:not|'t|’t)|i am (?:unable|not able)|i[’']m (?:unable|not able|sorry)|as an ai|tôi không thể"
    r"|xin lỗi|không thể (?:đánh giá|chấm|trả lời)|tôi từ chối"
)
# The end of a reply cut off right after a decimal separator: "Score: 4." may have become "4.5".
_SPLIT_NUMBER = re.compile(_S + r"[.,]" + _S)

VERDICT, CRITERION, PLAIN = "verdict", "criterion", "plain"


@dataclass
class _Mention:
    start: int  # the number, in the readable text
    end: int
    match_end: int  # the whole mention ("4/5", "4 điểm")
    line: int
    value: int | None
    reason: str
    kind: str
    role: str = PLAIN


def _value(number: str, denominator: str | None = None) -> tuple[int | None, str]:
    """(the 0-5 integer, "") or (None, why the number is not a score)."""
    if denominator is not None:
        try:
            scale = float(denominator.replace(",", "."))
        except ValueError:
            return None, "other_scale"
        if scale != SCORE_MAX:
            return None, "other_scale"
    try:
        value = float(number.replace(",", "."))
    except ValueError:
        return None, "no_score"
    if not value.is_integer():
        return None, "not_integer"
    if not SCORE_MIN <= value <= SCORE_MAX:
        return None, "out_of_range"
    return int(value), ""


def _lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of each non-blank line, stripped."""
    out = []
    for match in re.finditer(r"[^\n]+", text):
        line = match.group()
        if not line.strip():
            continue
        start = match.start() + len(line) - len(line.lstrip())
        out.append((start, match.start() + len(line.rstrip())))
    return out


def _line_of(lines: list[tuple[int, int]], position: int) -> int:
    for index, (start, end) in enumerate(lines):
        if start <= position < end:
            return index
    return len(lines) - 1


def _role(text: str, lines, mention: _Mention) -> str:
    """Whether a mention is the verdict, one criterion's score, or a number in prose."""
    line_start, line_end = lines[mention.line]
    head = text[line_start : mention.start]
    breaks = list(_CLAUSE_BREAK.finditer(head))
    if breaks:
        head = head[breaks[-1].end() :]
    tail = text[mention.match_end : line_end]
    stop = _CLAUSE_BREAK.search(tail)
    tail = tail[: stop.start()] if stop else tail
    if _OVERALL.search(head):
        return VERDICT
    if _CRITERION.search(head) or (_FOR_CRITERION.match(tail) and _CRITERION.search(tail)):
        return CRITERION
    if _VERDICT_WORD.search(head) or mention.kind == "points":
        return VERDICT
    if mention.kind in ("fraction", "out_of") and not re.sub(r"[^\w]", "", head):
        return VERDICT  # "4/5 - the explanation ..." opens with its score
    return PLAIN


def _mentions(text: str, lines) -> list[_Mention]:
    found: dict[int, _Mention] = {}

    def add(match, kind: str, denominator: str | None = None) -> None:
        start, end = match.span(1)
        if _INDEX_BEFORE.search(text[max(0, start - 16) : start]):
            return
        value, reason = _value(match.group(1), denominator)
        if _PERCENT.match(text, end):
            value, reason = None, "other_scale"
        found[start] = _Mention(
            start=start,
            end=end,
            match_end=match.end(),
            line=_line_of(lines, start),
            value=value,
            reason=reason,
            kind=kind,
        )

    for match in _LABELLED.finditer(text):
        add(match, "labelled")
    for match in _POINTS.finditer(text):
        add(match, "points")
    # A fraction decides for its numerator: "Score: 4/10" is on another scale, whatever the label.
    for match in _FRACTION.finditer(text):
        add(match, "fraction", match.group(2))
    for match in _OUT_OF_RE.finditer(text):
        add(match, "out_of", match.group(2))
    mentions = sorted(found.values(), key=lambda m: m.start)
    for mention in mentions:
        mention.role = _role(text, lines, mention)
    return mentions


def _bare(text: str, line: tuple[int, int]) -> _Mention | None:
    match = _BARE.match(text[line[0] : line[1]])
    if not match:
        return None
    denominator = match.group(2)
    value, reason = _value(match.group(1), denominator)
    start, end = line[0] + match.start(1), line[0] + match.end(1)
    if _PERCENT.match(text, end):
        value, reason = None, "other_scale"
    return _Mention(start, end, line[1], 0, value, reason, "bare", VERDICT)


def _has_range(text: str, line: tuple[int, int]) -> bool:
    for match in _RANGE.finditer(text[line[0] : line[1]]):
        low, high = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        if (low, high) not in {("0", "5"), ("1", "5")}:  # the scale itself, not a score
            return True
    return False


def _reading(mention: _Mention) -> JudgeReading:
    if mention.value is None:
        return JudgeReading(None, mention.reason)
    return JudgeReading(mention.value, "", mention.start, mention.end)


def _agreeing(candidates: list[_Mention], *, disagreement: str) -> JudgeReading | None:
    """The score every candidate gives, else the reason."""
    if not candidates:
        return None
    valid = {m.value for m in candidates if m.value is not None}
    if len(valid) > 1 or (valid and len(valid) < len({m.value for m in candidates})):
        return JudgeReading(None, disagreement)
    if valid:
        return _reading([m for m in candidates if m.value is not None][-1])
    return JudgeReading(None, candidates[-1].reason)


def _decide(text: str, lines, mentions: list[_Mention]) -> JudgeReading:
    single = len(lines) == 1
    if single and (bare := _bare(text, lines[0])):
        return _reading(bare)
    verdicts = [m for m in mentions if m.role == VERDICT]
    if verdicts:
        return _reading(verdicts[-1])
    last = len(lines) - 1
    on_last = [m for m in mentions if m.line == last and m.role != CRITERION]
    if on_last:
        return _reading(on_last[-1])
    if not single and (bare := _bare(text, lines[-1])):
        return _reading(bare)
    if _has_range(text, lines[-1]):
        return JudgeReading(None, "alternatives")
    first = text[lines[0][0] : lines[0][1]]
    leading = _LEADING.match(first)
    others_numbered = any(re.match(r"[^\w]*\d", text[s:e]) for s, e in lines[1:])
    glossed = leading and leading.group("sep").strip() and _GLOSS.search(leading.group("rest"))
    if glossed and (single or (not mentions and not others_numbered)):
        value, reason = _value(leading.group(1))
        start, end = lines[0][0] + leading.start(1), lines[0][0] + leading.end(1)
        return _reading(_Mention(start, end, end, 0, value, reason, "leading"))
    bares = [b for line in lines if (b := _bare(text, line))]
    agreed = _agreeing(sorted(mentions + bares, key=lambda m: m.start), disagreement="conflicting")
    if agreed is not None:
        return agreed
    if any(_has_range(text, line) for line in lines):
        return JudgeReading(None, "alternatives")
    if any(_LIST_ITEM.match(text[s:e]) for s, e in lines):
        return JudgeReading(None, "list_number")
    if single and _NUMBERS_ONLY.match(first):
        numbers = list(re.finditer(r"\d+", first))
        if len({n.group() for n in numbers}) > 1:
            return JudgeReading(None, "alternatives")
        # One number said over and over (a repetition loop): that number.
        value, reason = _value(numbers[-1].group())
        start = lines[0][0] + numbers[-1].start()
        return _reading(_Mention(start, start + len(numbers[-1].group()), 0, 0, value, reason, "repeated"))
    if single and leading:
        return JudgeReading(None, "not_a_verdict")
    if _REFUSAL.search(text):
        return JudgeReading(None, "refusal")
    return JudgeReading(None, "no_score")


def _decide_cut_off(text: str, lines, mentions: list[_Mention]) -> JudgeReading:
    """A reply the token limit cut: only an explicit verdict counts, never a criterion's score,
    a leading number or a list number; nor a number the cut may have split ("4." may be "4.5")."""

    def whole(mention: _Mention) -> bool:
        return not _SPLIT_NUMBER.fullmatch(text, mention.match_end)

    candidates = [m for m in mentions if m.role != CRITERION and whole(m)]
    verdicts = [m for m in candidates if m.role == VERDICT]
    if verdicts:
        return _reading(verdicts[-1])
    bares = [b for line in lines if (b := _bare(text, line)) and not _SPLIT_NUMBER.fullmatch(text, b.end)]
    agreed = _agreeing(sorted(candidates + bares, key=lambda m: m.start), disagreement="cut_off")
    return agreed or JudgeReading(None, "cut_off")


def read_judge_score(reply: str | None, *, finish_reason: str = "", refusal: str = "") -> JudgeReading:
    """The integer 0-5 a judge reply gives, or why none can be read, and where it is in the reply.

    Read: a bare number ("4", "4.0", "**5**", "[[4]]"), a fraction of 5 ("4/5") or "4 out of 5",
    a labelled score ("Score: 3", "Điểm: 0", "Độ tương đồng tổng thể: 4/5", "I'd give it a 4"),
    "N điểm"/"N points", and a one-line reply that opens with its score glossed in the scale's
    words after a separator ("4 - đúng ý chính", "5 (Rất tương đồng)").

    Which mention decides: the last verdict (a label such as score, điểm, overall, tổng thể or
    a final line) over any criterion's score ("1. Độ chính xác: 3/5"); else the last line's score;
    else the score every mention agrees on. Reasoning in <think> tags is skipped.

    Never a score: a number opening a list item ("1. Kim chỉ có đầu", "2) ..."), a leading number
    in ordinary text ("3 con mèo"), the scale itself ("0-5"), a range or alternatives ("3-4",
    "3 hoặc 4"), a number outside 0-5 or not whole ("4.5"), a fraction of anything but 5 ("8/10").

    ``finish_reason="length"`` (the reply was cut off by max_tokens): only an explicit verdict
    counts (a labelled score, a fraction of 5, "N điểm", a bare number on a line of its own),
    never a leading number, a list number or a criterion's score, nor a number the cut may have
    split ("Score: 4." at the very end may have become "4.5"). ``refusal`` (the provider's refusal) or
    ``finish_reason="content_filter"`` leaves the reply unscored as a refusal.
    """
    if refusal or finish_reason == "content_filter":
        return JudgeReading(None, "refusal")
    cut = finish_reason == "length"
    if not reply or not reply.strip():
        return JudgeReading(None, "cut_off" if cut else "empty")
    text, origin = _readable(reply)
    lines = _lines(text)
    if not lines:  # nothing but reasoning
        return JudgeReading(None, "cut_off" if cut else "no_score")
    mentions = _mentions(text, lines)
    reading = _decide_cut_off(text, lines, mentions) if cut else _decide(text, lines, mentions)
    if reading.start is None:
        return reading
    return JudgeReading(reading.score, "", origin[reading.start], origin[reading.end - 1] + 1)


def parse_judge_score(reply: str | None, *, finish_reason: str = "", refusal: str = "") -> int | None:
    """The integer 0-5 of a judge reply, None when unscored (see ``read_judge_score``)."""
    return read_judge_score(reply, finish_reason=finish_reason, refusal=refusal).score


def unscored_reason_text(code: str) -> str:
    return str(UNSCORED_REASONS.get(code, code))


# --- probability-weighted scores (G-Eval, Liu et al. 2023) --------------------------------------

_TOKEN_NOISE = " \t\n\r▁Ġ*_`#\"'([{:=>"


def _score_of_token(token: str | None) -> int | None:
    if not token:
        return None
    text = token.strip(_TOKEN_NOISE)
    return int(text) if len(text) == 1 and text in "012345" else None


def _token_at(logprobs: list[dict], reply: str, position: int) -> int | None:
    """The index of the token that holds the reply's character ``position``."""
    tokens = [entry.get("token") or "" for entry in logprobs]
    joined = "".join(tokens)
    shift = None
    if joined == reply:
        shift = 0
    elif joined.strip() == reply.strip():
        shift = (len(joined) - len(joined.lstrip())) - (len(reply) - len(reply.lstrip()))
    if shift is not None:
        offset = 0
        for index, token in enumerate(tokens):
            if offset <= position + shift < offset + len(token):
                return index
            offset += len(token)
        return None
    # The tokens do not spell the reply (a character split between tokens, a server that trims):
    # the token of that digit nearest to where it should be.
    digit = _score_of_token(reply[position])
    best, best_distance, offset = None, None, 0
    for index, token in enumerate(tokens):
        if _score_of_token(token) == digit:
            distance = abs(offset - position)
            if best_distance is None or distance < best_distance:
                best, best_distance = index, distance
        offset += len(token)
    return best


def expected_score(logprobs: list | None, reply: str, reading: JudgeReading) -> tuple[float, list[float]] | None:
    """The probability-weighted score at the token of the score that was read: the sum of s x P(s)
    over s = 0..5, the probabilities of the six score tokens among the token's top alternatives
    renormalised to sum to 1 (G-Eval). Also the six probabilities. None without log-probabilities,
    without a score, or when the score's token is not a lone digit ("45")."""
    if not logprobs or reading.score is None or reading.start is None:
        return None
    index = _token_at(logprobs, reply, reading.start)
    if index is None:
        return None
    entry = logprobs[index]
    if _score_of_token(entry.get("token")) is None:
        return None
    best: dict[str, float] = {}
    for candidate in [*(entry.get("top") or []), {"token": entry.get("token"), "logprob": entry.get("logprob")}]:
        token, logprob = candidate.get("token"), candidate.get("logprob")
        if token is None or logprob is None:
            continue
        best[token] = max(best.get(token, -math.inf), float(logprob))
    mass = [0.0] * (SCORE_MAX + 1)
    for token, logprob in best.items():
        score = _score_of_token(token)
        if score is not None:
            mass[score] += math.exp(logprob)
    total = sum(mass)
    if total <= 0:
        return None
    probabilities = [m / total for m in mass]
    return sum(s * p for s, p in enumerate(probabilities)), probabilities


def compact_logprobs(logprobs: list | None) -> list | None:
    """A judge reply's log-probabilities as kept: every token (to find the score's again) with its
    alternatives only where the token is a score digit; the other alternatives would make a
    chain-of-thought reply's record tens of times larger and are never read."""
    if not logprobs:
        return logprobs
    return [
        {**entry, "top": entry.get("top") or []}
        if _score_of_token(entry.get("token")) is not None
        else {key: value for key, value in entry.items() if key != "top"} | {"top": []}
        for entry in logprobs
    ]


# Kept for the pairwise parser: markup removed, casefolded.
_PAIRWISE_MARKUP = re.compile(r"[*_`#>]+")


def _clean(reply: str) -> str:
    # Casefolding can decompose a precomposed Vietnamese letter: compose again after it.
    text = unicodedata.normalize("NFC", unicodedata.normalize("NFC", reply).casefold())
    return _PAIRWISE_MARKUP.sub("", text)


# --- classification --------------------------------------------------------------------------
# The rule lives in evaluation/answers.py (standard library only), which the exported harness
# task folders ship verbatim: one rule for the app's runs and the harnesses' scores.

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
