"""The VIVID prompt protocol: built-in templates, rendering, hashing and the 3-shot classification conversation.

Templates quoted from the paper (reference "VIVID Fig. N") are the Vietnamese originals of
Appendices A-B. The PDF-to-text extraction dropped the spaces around emphasised words and the
line breaks inside the figures; they are restored here and nothing else is changed (the
spelling, the curly quotes and the missing final full stops are the paper's). Removing all
whitespace from a quoted template gives back the paper's text (tests/evaluation/test_prompts.py
checks it against the paper when the text file is available).

Placeholders are `str.format` fields:

- `{phrase}`: the idiom or proverb (the paper's own name, Figs 5, 6, 7, 9 and 10);
- `{explanation}`: the human reference explanation (Fig. 7 prints it as `{ground_truth}`);
- `{response}`: the model explanation being judged (Fig. 7 prints it as `{llm_output}`).

Every judge template takes the same three fields, so a judge run renders any strategy with the
same values. The two Fig. 7 fields are renamed because every judge strategy must share one
vocabulary with the runs and the forms; the wording around them is untouched.

The built-in rows in the database are created by a frozen copy of these texts in
migrations/0002_builtin_prompts_and_model.py: changing a text here means a new template version
(a new content hash) and a new data migration, never an edit of an old one.
"""

from __future__ import annotations

import hashlib
import json
import random
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

GENERATION = "generation"
JUDGE = "judge"
CLASSIFICATION = "classification"

TOPIC = "topic"
TRAITS = "traits"
CLASSIFICATION_TASKS = (TOPIC, TRAITS)
JUDGE_STRATEGIES = ("zero-shot", "demonstration", "cot", "aspect")
GENERATION_PROMPTS = ("zero-shot", "few-shot")

PLACEHOLDERS = {
    GENERATION: ("phrase",),
    JUDGE: ("phrase", "explanation", "response"),
    CLASSIFICATION: ("phrase",),
}

N_SHOTS = 3
OURS = "ours, after VIVID §4.1"

# --- Appendix A.1 --------------------------------------------------------------------------

FIG5_ZERO_SHOT = "Giải thích ngắn gọn bằng tiếng Việt ý nghĩa câu thành ngữ sau:\n{phrase}"

FIG6_FEW_SHOT = (
    "Bạn là chuyên gia ngôn ngữ tiếng Việt. Nhiệm vụ của bạn là giải thích bằng tiếng Việt ý nghĩa "
    "của câu thành ngữ hoặc tục ngữ sau một cách ngắn gọn, rõ ràng và dễ hiểu. Hãy đọc và tham khảo "
    "các cách giải thích dưới đây:\n"
    "\n"
    "Ví dụ 1:\n"
    "“dân chỉ công bộc”\n"
    "Giải thích: Câu tục ngữ “dân chỉ công bộc” có ý nghĩa là dân chúng chính là người chủ, còn những "
    "người làm việc trong bộ máy nhà nước, chính quyền là “công bộc”, tức là người phục vụ cho dân. "
    "Thành ngữ này nhấn mạnh vai trò quan trọng của người dân trong xã hội và trách nhiệm của những "
    "người làm công tác quản lý, lãnh đạo trong việc phục vụ và đáp ứng nhu cầu của nhân dân.\n"
    "\n"
    "Ví dụ 2:\n"
    "“Cần tái cải nhừ”\n"
    "Giải thích: Một kinh nghiệm ăn uống: với rau cần khi thả vào nước sôi, đun cho sôi lại là bắc ra "
    "ngay (tái) để rau không bị nhũn và tránh có mùi nồng; với rau cải phải đun kỹ mới hết hăng hết cay.\n"
    "\n"
    "Ví dụ 3:\n"
    "“ăn cho thủng nổi trôi rế”\n"
    "Giải thích: diễn tả việc ăn uống một cách rất nhiều, không kiêng khem hay tiết chế. Ý nghĩa của câu "
    "này là chỉ sự ăn uống quá mức, đến mức có thể “thủng” cả cái rế (vật dụng đựng thức ăn). Chê những "
    "kẻ ăn uống tham lam quá độ.\n"
    "\n"
    "Bây giờ, hãy giải thích câu sau:\n"
    "{phrase}\n"
    "giải thích:"
)

# --- Appendix A.2: Fig. 7 with the calibration examples of Fig. 8 where the figure marks them --

FIG7_INSTRUCTIONS = (
    "[Hướng dẫn]\n"
    "Bạn là chuyên gia ngôn ngữ. Nhiệm vụ của bạn là đánh giá độ tương đồng giữa giải thích gốc (con "
    "người) và giải thích của LLM cho một câu thành ngữ/tục ngữ, dựa trên các tiêu chí sau:\n"
    "1. Độ chính xác của ý nghĩa cốt lõi (0–5 điểm): Giải thích của LLM nắm bắt đúng và chính xác ý "
    "nghĩa chính của câu thành ngữ/tục ngữ so với giải thích gốc? (5: Rất chính xác, 0: Sai lệch hoàn toàn)\n"
    "2. Khả năng nắm bắt sắc thái, ngữ cảnh, ẩn ý (0–5 điểm): Giải thích của LLM có phản ánh được các "
    "sắc thái, ngữ cảnh sử dụng điển hình, hoặc ý nghĩa ẩn sâu của câu nói như giải thích gốc không? "
    "(5: Rất tương đồng, 0: Không phản ánh được)\n"
    "3. Chất lượng diễn đạt, sự rõ ràng, lưu loát (0–5 điểm): Giải thích của LLM có rõ ràng, dễ hiểu, "
    "mạch lạc và tự nhiên không? (5: Rất tốt, 0: Rất kém/khó hiểu)\n"
    "4. Độ đầy đủ (0–5 điểm): Giải thích của LLM có bao gồm các ý chính được đề cập trong giải thích "
    "gốc không? (5: Rất đầy đủ, 0: Thiếu nhiều ý chính)\n"
    "5. Độ tương đồng tổng thể (0–5 điểm): Tổng hợp các đánh giá trên, mức độ tương đồng chung là bao "
    "nhiêu? (5: Rất tương đồng, 0: Không tương đồng)"
)

FIG8_EXAMPLES = (
    "Ví dụ Minh họa 1\n"
    "Thành ngữ/Tục ngữ: Chưa đủ lông đủ cánh\n"
    "Giải thích nghĩa gốc: Còn non nớt, chưa đủ khả năng tự lập.\n"
    "Giải nghĩa do LLM: Câu thành ngữ “Chưa đủ lông đủ cánh” được dùng để chỉ một người hoặc một sự "
    "vật, sự việc nào đó chưa phát triển hoàn thiện, chưa đủ trưởng thành hoặc chưa có đủ khả năng, "
    "kinh nghiệm để thực hiện một nhiệm vụ, công việc nào đó một cách độc lập.\n"
    "Đánh giá chi tiết:\n"
    "1. Độ chính xác của ý nghĩa cốt lõi: 5/5\n"
    "2. Khả năng nắm bắt sắc thái, ngữ cảnh, ẩn ý: 5/5\n"
    "3. Chất lượng diễn đạt, sự rõ ràng, lưu loát: 5/5\n"
    "4. Độ đầy đủ: 5/5\n"
    "Độ tương đồng tổng thể: 5/5\n"
    "\n"
    "Ví dụ Minh họa 2\n"
    "Thành ngữ/Tục ngữ: Kim chỉ có đầu\n"
    "Giải thích nghĩa gốc: Phải có trên dưới, đầu đuôi, trật tự văn phép.\n"
    "Giải nghĩa do LLM: Câu thành ngữ “Kim chỉ có đầu” mang ý nghĩa rằng mọi việc đều có nguyên nhân "
    "và nguồn gốc, không có gì tự nhiên mà xảy ra.\n"
    "Đánh giá chi tiết:\n"
    "1. Độ chính xác của ý nghĩa cốt lõi: 1/5\n"
    "2. Khả năng nắm bắt sắc thái, ngữ cảnh, ẩn ý: 1/5\n"
    "3. Chất lượng diễn đạt, sự rõ ràng, lưu loát: 3/5\n"
    "4. Độ đầy đủ: 1/5\n"
    "Độ tương đồng tổng thể: 1/5"
)

FIG7_TASK = (
    "[Nhiệm vụ cần đánh giá]\n"
    "Thành ngữ/Tục ngữ: {phrase}\n"
    "Giải thích của Con người: {explanation}\n"
    "Giải thích của LLM: {response}\n"
    "Đánh giá chi tiết:\n"
    "1. Độ chính xác của ý nghĩa cốt lõi:\n"
    "2. Khả năng nắm bắt sắc thái, ngữ cảnh, ẩn ý:\n"
    "3. Chất lượng diễn đạt, sự rõ ràng, lưu loát:\n"
    "4. Độ đầy đủ:\n"
    "Nếu tiêu chí 1 được 0 điểm thì Độ tương đồng tổng thể được 0.\n"
    "Độ tương đồng tổng thể: hãy suy nghĩ sau đó chỉ trả về duy nhất đánh giá của độ tương đồng tổng "
    "thể và không giải thích gì thêm"
)

FIG7_ASPECT = f"{FIG7_INSTRUCTIONS}\n\n{FIG8_EXAMPLES}\n\n{FIG7_TASK}"

# --- Appendix B ----------------------------------------------------------------------------

FIG9_TOPIC = (
    "Bạn là chuyên gia ngôn ngữ. Dưới đây là một câu thành ngữ/tục ngữ: “{phrase}”\n"
    "Nhiệm vụ của bạn là xác định câu này thuộc một trong các đặc điểm sau:\n"
    "1. Tình yêu đôi lứa và hôn nhân Ví dụ: chẳng nên tình trước nghĩa sau, có con ta gả cho nhau thiệt gì\n"
    "2. Ca ngợi phẩm chất và đạo đức con người Ví dụ: cân quắc anh hùng\n"
    "3. Phê phán và châm biếm các thói quen xấu, hành vi tiêu cực Ví dụ: ai biết uốn câu cho vừa miệng cá\n"
    "4. Kinh nghiệm sống về sản xuất, lao động và thiên nhiên Ví dụ: ác tắm thì ráo, sáo tắm thì mưa\n"
    "5. Các mối quan hệ xã hội, gia đình Ví dụ: ắm con chồng hơn bồng cháu ngoại\n"
    "6. Triết lý và bài học về cách sống Ví dụ: con ruồi đậu nặng đồng cân\n"
    "7. Các chủ đề khác (nếu không phù hợp với các mục trên)\n"
    "Chỉ trả lời duy nhất một số (1–7). Không giải thích, không thêm ký tự nào khác."
)

FIG10_TRAITS = (
    "Bạn là chuyên gia ngôn ngữ. Dưới đây là một câu thành ngữ/tục ngữ: “{phrase}”\n"
    "Nhiệm vụ của bạn là xác định câu này thuộc những đặc điểm nào trong danh sách dưới đây. Kết quả "
    "trả về là danh sách số thứ tự đặc điểm, cách nhau bằng dấu phẩy (ví dụ: “1,3,5”). Nếu không thuộc "
    "đặc điểm nào, trả về chuỗi rỗng “”.\n"
    "Danh sách đặc điểm:\n"
    "1. Là câu tục ngữ không mang nghĩa bóng (chỉ mang nghĩa đen/kỹ thuật). Ví dụ: Da đồng lông móc "
    "(kinh nghiệm chọn trâu, không hàm ý sâu xa).\n"
    "2. Có từ Hán Việt xuất hiện. Ví dụ: Nhất tự vi sư, bán tự vi sư.\n"
    "3. Có từ ít phổ biến, ít dùng trong ngôn ngữ hiện đại. Ví dụ: Am thanh cảnh vắng (từ “am” nghĩa là "
    "chùa nhỏ).\n"
    "4. Thể hiện kinh nghiệm dân gian xưa của người Việt Nam. Ví dụ: Cấy thưa thừa thóc, cấy mau dốc bồ.\n"
    "5. Mang sắc thái mỉa mai, châm biếm hoặc tiêu cực. Ví dụ: Tốt mẽ khoe màu.\n"
    "Chỉ trả lời bằng các số đặc điểm, sắp xếp theo thứ tự tăng dần, cách nhau bằng dấu phẩy. Không giải "
    "thích, không thêm ký tự nào khác ngoài danh sách số."
)

# --- Judge strategies the paper describes (section 4.1) but does not print ------------------
# The demonstration examples use idioms that are not in the demo dataset
# (annotation/demo/vivid_demo.csv), so a demo judge run never sees its own items as examples.

_JUDGE_SCALE = "trên thang điểm từ 0 đến 5 (5: hoàn toàn tương đồng và chính xác về ý nghĩa, 0: sai lệch hoàn toàn)"
_JUDGE_ITEM = "Thành ngữ/Tục ngữ: {phrase}\nGiải thích gốc: {explanation}\nGiải thích của LLM: {response}"
_ONLY_THE_SCORE = "Chỉ trả lời duy nhất một số nguyên từ 0 đến 5. Không giải thích, không thêm ký tự nào khác."

OURS_JUDGE_ZERO_SHOT = (
    "Bạn là chuyên gia ngôn ngữ. Hãy chấm điểm giải thích của LLM cho câu thành ngữ/tục ngữ dưới đây "
    f"so với giải thích gốc (con người), {_JUDGE_SCALE}.\n"
    "\n"
    f"{_JUDGE_ITEM}\n"
    "\n"
    f"{_ONLY_THE_SCORE}"
)

OURS_JUDGE_DEMONSTRATION = (
    "Bạn là chuyên gia ngôn ngữ. Nhiệm vụ của bạn là chấm điểm giải thích của LLM cho một câu thành "
    f"ngữ/tục ngữ so với giải thích gốc (con người), {_JUDGE_SCALE}. Dưới đây là một số ví dụ đã được "
    "chấm điểm, gồm cả giải thích tốt và giải thích kém:\n"
    "\n"
    "Ví dụ 1\n"
    "Thành ngữ/Tục ngữ: Nước đổ đầu vịt\n"
    "Giải thích gốc: Khuyên bảo, dạy dỗ mãi mà người nghe vẫn không tiếp thu, chẳng có tác dụng gì, "
    "như nước đổ lên đầu con vịt trôi tuột đi hết.\n"
    "Giải thích của LLM: Câu thành ngữ chỉ việc nói đi nói lại, khuyên răn nhiều lần nhưng người nghe "
    "không để tâm, không thay đổi; lời nói trôi đi vô ích như nước đổ lên lông vịt mà không thấm.\n"
    "Nhận xét: Đúng ý nghĩa cốt lõi, giữ được hình ảnh và sắc thái chê trách, đầy đủ và rõ ràng.\n"
    "Điểm: 5\n"
    "\n"
    "Ví dụ 2\n"
    "Thành ngữ/Tục ngữ: Uống nước nhớ nguồn\n"
    "Giải thích gốc: Khi được hưởng thành quả thì phải nhớ ơn những người đã làm ra, gây dựng nên nó; "
    "đạo lý biết ơn tổ tiên, thế hệ đi trước của người Việt.\n"
    "Giải thích của LLM: Câu tục ngữ nhắc con người phải biết ơn những ai đã giúp đỡ mình.\n"
    "Nhận xét: Đúng ý chính là lòng biết ơn nhưng chưa nói đến thành quả được hưởng và truyền thống "
    "nhớ ơn tổ tiên, thế hệ đi trước.\n"
    "Điểm: 4\n"
    "\n"
    "Ví dụ 3\n"
    "Thành ngữ/Tục ngữ: Vắt chanh bỏ vỏ\n"
    "Giải thích gốc: Chê kẻ bạc bẽo, lợi dụng người khác lúc cần, đến khi hết lợi ích thì ruồng bỏ, "
    "như vắt hết nước quả chanh rồi vứt vỏ đi.\n"
    "Giải thích của LLM: Câu này nói về việc tận dụng hết giá trị của một thứ rồi bỏ đi phần không còn "
    "dùng được, thể hiện sự tiết kiệm.\n"
    "Nhận xét: Chỉ hiểu theo nghĩa đen, bỏ mất nghĩa bóng về cách đối xử bạc bẽo với con người và sắc "
    "thái phê phán; kết luận “tiết kiệm” còn đi ngược ý chê trách.\n"
    "Điểm: 1\n"
    "\n"
    "Ví dụ 4\n"
    "Thành ngữ/Tục ngữ: Đẽo cày giữa đường\n"
    "Giải thích gốc: Chê người không có chính kiến, ai nói gì cũng nghe theo nên cuối cùng chẳng làm nên "
    "việc gì, như anh chàng đẽo cày bên đường nghe mỗi người qua góp một ý mà làm hỏng cả khúc gỗ.\n"
    "Giải thích của LLM: Câu thành ngữ khuyên con người phải chăm chỉ, tranh thủ làm việc ở mọi lúc mọi "
    "nơi, kể cả khi đang đi đường.\n"
    "Nhận xét: Sai hoàn toàn ý nghĩa cốt lõi.\n"
    "Điểm: 0\n"
    "\n"
    "Bây giờ, hãy chấm điểm trường hợp sau:\n"
    f"{_JUDGE_ITEM}\n"
    "\n"
    f"{_ONLY_THE_SCORE}"
)

OURS_JUDGE_COT = (
    "Bạn là chuyên gia ngôn ngữ. Nhiệm vụ của bạn là chấm điểm giải thích của LLM cho câu thành ngữ/tục "
    f"ngữ dưới đây so với giải thích gốc (con người), {_JUDGE_SCALE}.\n"
    "\n"
    f"{_JUDGE_ITEM}\n"
    "\n"
    "Hãy suy luận từng bước trước khi chấm điểm:\n"
    "1. Xác định ý nghĩa cốt lõi của câu theo giải thích gốc.\n"
    "2. So sánh với ý nghĩa mà giải thích của LLM đưa ra: đúng, đúng một phần hay sai.\n"
    "3. Xem giải thích của LLM có bỏ sót hoặc thêm sai ý nào không, có phản ánh được sắc thái và cách "
    "hiểu của người bản ngữ không.\n"
    "4. Kết luận mức điểm phù hợp.\n"
    "Sau phần suy luận, dòng cuối cùng chỉ ghi điểm theo đúng dạng “Điểm: N”, trong đó N là một số "
    "nguyên từ 0 đến 5."
)


def _user(content: str) -> list[dict]:
    return [{"role": "user", "content": content}]


BUILTIN_PROMPTS: list[dict] = [
    {
        "name": "zero-shot",
        "kind": GENERATION,
        "messages": _user(FIG5_ZERO_SHOT),
        "reference": "VIVID Fig. 5",
        "ours": False,
    },
    {
        "name": "few-shot",
        "kind": GENERATION,
        "messages": _user(FIG6_FEW_SHOT),
        "reference": "VIVID Fig. 6",
        "ours": False,
    },
    {"name": "zero-shot", "kind": JUDGE, "messages": _user(OURS_JUDGE_ZERO_SHOT), "reference": OURS, "ours": True},
    {
        "name": "demonstration",
        "kind": JUDGE,
        "messages": _user(OURS_JUDGE_DEMONSTRATION),
        "reference": OURS,
        "ours": True,
    },
    {"name": "cot", "kind": JUDGE, "messages": _user(OURS_JUDGE_COT), "reference": OURS, "ours": True},
    {
        "name": "aspect",
        "kind": JUDGE,
        "messages": _user(FIG7_ASPECT),
        "reference": "VIVID Fig. 7 (with the examples of Fig. 8)",
        "ours": False,
    },
    {"name": TOPIC, "kind": CLASSIFICATION, "messages": _user(FIG9_TOPIC), "reference": "VIVID Fig. 9", "ours": False},
    {
        "name": TRAITS,
        "kind": CLASSIFICATION,
        "messages": _user(FIG10_TRAITS),
        "reference": "VIVID Fig. 10",
        "ours": False,
    },
]


def builtin_prompt(kind: str, name: str) -> dict:
    for prompt in BUILTIN_PROMPTS:
        if prompt["kind"] == kind and prompt["name"] == name:
            return prompt
    raise KeyError(f"no built-in {kind} prompt named {name!r}")


# --- hashing and rendering -----------------------------------------------------------------


def template_hash(messages: list[dict]) -> str:
    """The version id of a template: sha256 of its canonical JSON.

    The text is hashed as stored (no Unicode normalisation): the hash names the exact bytes a
    model receives, and NFC and NFD Vietnamese are different inputs to a tokenizer.
    """
    canonical = json.dumps(messages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _texts(messages: Iterable[dict]) -> Iterable[str]:
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    yield part["text"]


def placeholders(messages: list[dict]) -> set[str]:
    """The `str.format` field names a template needs (raises ValueError on a malformed template)."""
    names = set()
    formatter = string.Formatter()
    for text in _texts(messages):
        for _literal, field, _spec, _conversion in formatter.parse(text):
            if field is None:
                continue
            name = field.split(".", 1)[0].split("[", 1)[0]
            if not name or name.isdigit():
                raise ValueError(
                    "prompt templates take named placeholders only, e.g. {phrase}; write {{ and }} for literal braces"
                )
            names.add(name)
    return names


def _format(text: str, values: dict) -> str:
    try:
        return text.format(**values)
    except KeyError as exc:
        name = exc.args[0] if exc.args else "?"
        raise KeyError(
            f"prompt placeholder {{{name}}} has no value (given: {', '.join(sorted(values)) or 'none'})"
        ) from None
    except IndexError:
        raise ValueError(
            "prompt templates take named placeholders only, e.g. {phrase}; write {{ and }} for literal braces"
        ) from None


def render(messages: list[dict], **values) -> list[dict]:
    """The messages with every placeholder filled; the template itself is left untouched.

    Values the template does not use are ignored, so a caller may pass the whole vocabulary of
    its kind (PLACEHOLDERS). A missing one raises KeyError naming it.
    """
    rendered = []
    for message in messages:
        message = dict(message)
        content = message.get("content")
        if isinstance(content, str):
            message["content"] = _format(content, values)
        elif isinstance(content, list):
            message["content"] = [
                {**part, "text": _format(part["text"], values)}
                if isinstance(part, dict) and isinstance(part.get("text"), str)
                else part
                for part in content
            ]
        rendered.append(message)
    return rendered


# --- classification: gold answers and the 3-shot conversation --------------------------------


def topic_answer(theme_number: int | None) -> str:
    """The answer Fig. 9 asks for: the theme's number, "1" to "7"."""
    return "" if theme_number is None else str(int(theme_number))


def traits_answer(trait_numbers: Iterable[int]) -> str:
    """The answer Fig. 10 asks for: ascending, comma-separated, no spaces; "" when no trait applies."""
    return ",".join(str(number) for number in sorted({int(n) for n in trait_numbers}))


def gold_answer(task: str, expression) -> str | None:
    """The gold answer of an annotation Expression; None when it cannot be scored (topic without a theme)."""
    if task == TOPIC:
        return None if expression.theme_id is None else topic_answer(expression.theme.number)
    if task == TRAITS:
        return traits_answer(trait.number for trait in expression.traits.all())
    raise ValueError(f"unknown classification task {task!r}; expected one of {', '.join(CLASSIFICATION_TASKS)}")


@dataclass(frozen=True)
class Shot:
    key: object
    text: str
    answer: str


def select_shots(
    pool: Iterable[Shot | tuple], item_key, *, seed: int, k: int = N_SHOTS, item_text: str | None = None
) -> list[tuple[str, str]]:
    """k labelled examples for one item, drawn from `pool` [(key, text, answer), ...].

    The item itself (same key, or same text when given) is never drawn. The draw depends only on
    the seed, the item and the pool's contents, not on the order of the pool or on which items
    were processed before, so a resumed or re-chunked run sends identical prompts (and hits
    the response cache). A str seed is hashed with sha512 by `random`, so it is also stable
    across processes whatever PYTHONHASHSEED is.
    """
    shots = [shot if isinstance(shot, Shot) else Shot(*shot) for shot in pool]
    eligible = [
        shot for shot in shots if shot.key != item_key and (item_text is None or shot.text.strip() != item_text.strip())
    ]
    eligible.sort(key=lambda shot: (str(shot.key), shot.text))
    rng = random.Random(f"vivid-shots:{seed}:{item_key}")
    chosen = rng.sample(eligible, min(k, len(eligible)))
    return [(shot.text, shot.answer) for shot in chosen]


def classification_messages(
    task: str | list[dict],
    expression_text: str,
    shots: Sequence[tuple[str, str]],
    *,
    template: list[dict] | None = None,
) -> list[dict]:
    """The k-shot conversation of the paper's classification tasks (Appendix B).

    Like lm-evaluation-harness with `fewshot_as_multiturn`, each example is the task prompt
    rendered on another expression as a user turn, followed by its gold answer as the
    assistant turn; the item comes last. Leading system messages of a custom template are
    sent once, at the start.

    `task` names a built-in template ("topic" or "traits"); a run whose template is stored in
    the database passes its messages instead, either as `template=` or in place of the task.
    Draw `shots` per item with `select_shots`: a shot that is the item itself is refused,
    since it would hand the model the answer.
    """
    if isinstance(task, list):
        template = task
    elif template is None:
        template = builtin_prompt(CLASSIFICATION, task)["messages"]
    elif task not in CLASSIFICATION_TASKS:
        raise ValueError(f"unknown classification task {task!r}; expected one of {', '.join(CLASSIFICATION_TASKS)}")
    split = 0
    while split < len(template) and template[split].get("role") == "system":
        split += 1
    system, turn = template[:split], template[split:]
    messages = render(system, phrase=expression_text)
    for text, answer in shots:
        if text.strip() == expression_text.strip():
            raise ValueError("a few-shot example must not be the item itself")
        messages += render(turn, phrase=text)
        messages.append({"role": "assistant", "content": answer})
    messages += render(turn, phrase=expression_text)
    return messages


def shot_pool(task: str, expressions: Iterable) -> list[Shot]:
    """The labelled expressions a run may draw its shots from (those without a gold answer are left out)."""
    pool = []
    for expression in expressions:
        answer = gold_answer(task, expression)
        if answer is not None:
            pool.append(Shot(expression.pk, expression.text, answer))
    return pool


# --- Judge bias diagnostics: paraphrases of each strategy's prompt, and pairwise judging -------
# Ours, all of them. A paraphrase asks the same question in other words (the examples and the
# criteria of the aspect rubric stay: they are the calibration, not the wording), so a judge
# whose scores move with the wording shows it in the alpha across paraphrases.

PAIRWISE = "pairwise"
PAIRWISE_PLACEHOLDERS = ("phrase", "explanation", "first", "second")
OURS_PARAPHRASE = "ours, a paraphrase of the {strategy} judge prompt"
OURS_PAIRWISE = "ours, pairwise judging after VIVID §4.1"

_DEMO_EXAMPLES = OURS_JUDGE_DEMONSTRATION[
    OURS_JUDGE_DEMONSTRATION.index("Ví dụ 1") : OURS_JUDGE_DEMONSTRATION.index("Bây giờ")
].rstrip("\n")
_ITEM_2 = "Câu thành ngữ/tục ngữ: {phrase}\nGiải thích của con người: {explanation}\nGiải thích cần chấm: {response}"
_ITEM_3 = "Câu: {phrase}\nNghĩa gốc (do con người viết): {explanation}\nGiải thích do LLM viết: {response}"

JUDGE_PARAPHRASES: dict[str, tuple[str, ...]] = {
    "zero-shot": (
        "Với vai trò một chuyên gia tiếng Việt, hãy đánh giá giải thích của LLM cho câu thành ngữ/tục ngữ sau "
        "khớp với giải thích gốc do con người viết đến mức nào. Cho điểm từ 0 (sai lệch hoàn toàn về ý nghĩa) "
        "đến 5 (hoàn toàn tương đồng và chính xác về ý nghĩa).\n"
        "\n"
        f"{_JUDGE_ITEM}\n"
        "\n"
        "Chỉ ghi một số nguyên duy nhất từ 0 đến 5, không kèm lời giải thích hay ký tự nào khác.",
        "So sánh giải thích của LLM với giải thích gốc của con người cho câu thành ngữ/tục ngữ dưới đây: giải "
        "thích của LLM diễn đạt đúng ý nghĩa đến mức nào? Chấm trên thang từ 0 đến 5, trong đó 5 là hoàn toàn "
        "tương đồng và chính xác, 0 là sai lệch hoàn toàn.\n"
        "\n"
        f"{_ITEM_2}\n"
        "\n"
        "Trả lời bằng đúng một số nguyên từ 0 đến 5 và không viết gì thêm.",
        "Bạn đang chấm bài giải nghĩa thành ngữ, tục ngữ tiếng Việt. Dựa vào nghĩa gốc do con người viết, hãy "
        "cho điểm giải thích của LLM từ 0 đến 5: 5 nghĩa là giải thích hoàn toàn đúng và tương đồng với nghĩa "
        "gốc, 0 nghĩa là hiểu sai hoàn toàn.\n"
        "\n"
        f"{_ITEM_3}\n"
        "\n"
        "Kết quả chỉ gồm một con số từ 0 đến 5, không giải thích.",
    ),
    "demonstration": (
        "Với vai trò một chuyên gia tiếng Việt, bạn chấm điểm giải thích của LLM cho một câu thành ngữ/tục ngữ, "
        "so với giải thích gốc do con người viết, từ 0 (sai lệch hoàn toàn) đến 5 (hoàn toàn tương đồng và "
        "chính xác về ý nghĩa). Các ví dụ đã chấm sau đây gồm cả giải thích tốt lẫn giải thích kém:\n"
        "\n"
        f"{_DEMO_EXAMPLES}\n"
        "\n"
        "Hãy chấm trường hợp dưới đây theo cùng cách:\n"
        f"{_JUDGE_ITEM}\n"
        "\n"
        "Chỉ ghi một số nguyên duy nhất từ 0 đến 5, không kèm lời giải thích hay ký tự nào khác.",
        "Nhiệm vụ: so sánh giải thích của LLM với giải thích gốc của con người cho một câu thành ngữ/tục ngữ và "
        f"cho điểm {_JUDGE_SCALE}. Tham khảo các ví dụ đã được chấm dưới đây:\n"
        "\n"
        f"{_DEMO_EXAMPLES}\n"
        "\n"
        "Trường hợp cần chấm:\n"
        f"{_JUDGE_ITEM}\n"
        "\n"
        "Trả lời bằng đúng một số nguyên từ 0 đến 5 và không viết gì thêm.",
        "Bạn đang chấm bài giải nghĩa thành ngữ, tục ngữ tiếng Việt theo thang điểm 0-5 (5: đúng và tương đồng "
        "hoàn toàn với giải thích gốc, 0: hiểu sai hoàn toàn). Sau đây là vài bài đã chấm, có bài tốt và bài "
        "kém, để bạn hiệu chỉnh cách cho điểm:\n"
        "\n"
        f"{_DEMO_EXAMPLES}\n"
        "\n"
        "Bây giờ đến lượt bài này:\n"
        f"{_JUDGE_ITEM}\n"
        "\n"
        "Kết quả chỉ gồm một con số từ 0 đến 5, không giải thích.",
    ),
    "cot": (
        "Với vai trò một chuyên gia tiếng Việt, hãy đánh giá giải thích của LLM cho câu thành ngữ/tục ngữ dưới "
        f"đây so với giải thích gốc của con người, {_JUDGE_SCALE}.\n"
        "\n"
        f"{_JUDGE_ITEM}\n"
        "\n"
        "Trước khi cho điểm, hãy lập luận theo các bước:\n"
        "1. Nêu ý nghĩa chính của câu theo giải thích gốc.\n"
        "2. Đối chiếu với ý nghĩa giải thích của LLM nêu ra: đúng, đúng một phần hay sai.\n"
        "3. Xét xem giải thích của LLM có thiếu, thừa hay sai ý nào, có giữ được sắc thái và cách hiểu của người "
        "Việt không.\n"
        "4. Chọn mức điểm phù hợp.\n"
        "Dòng cuối cùng chỉ ghi điểm theo dạng “Điểm: N”, với N là số nguyên từ 0 đến 5.",
        "Hãy chấm giải thích của LLM cho câu thành ngữ/tục ngữ sau, lấy giải thích gốc (con người) làm chuẩn, "
        "trên thang từ 0 (sai lệch hoàn toàn) đến 5 (hoàn toàn tương đồng và chính xác).\n"
        "\n"
        f"{_ITEM_2}\n"
        "\n"
        "Suy nghĩ từng bước: trước hết xác định nghĩa cốt lõi trong giải thích gốc; sau đó so với nghĩa trong "
        "giải thích cần chấm; tiếp theo kiểm tra những ý bị bỏ sót, thêm sai và sắc thái; cuối cùng quyết định "
        "điểm.\n"
        "Kết thúc bằng một dòng duy nhất dạng “Điểm: N” (N là số nguyên từ 0 đến 5).",
        "Bạn đang chấm bài giải nghĩa thành ngữ, tục ngữ tiếng Việt. Nghĩa gốc do con người viết là đáp án "
        "chuẩn; điểm từ 0 (hiểu sai hoàn toàn) đến 5 (đúng và tương đồng hoàn toàn).\n"
        "\n"
        f"{_ITEM_3}\n"
        "\n"
        "Hãy phân tích lần lượt:\n"
        "- Nghĩa cốt lõi của câu là gì?\n"
        "- Giải thích do LLM viết nắm đúng, đúng một phần hay sai nghĩa đó?\n"
        "- Có ý nào bị thiếu, bị thêm sai, hay sắc thái nào bị mất không?\n"
        "Sau khi phân tích, ghi điểm ở dòng cuối theo dạng “Điểm: N”, N là số nguyên từ 0 đến 5.",
    ),
    "aspect": (
        FIG7_INSTRUCTIONS.replace(
            "Bạn là chuyên gia ngôn ngữ. Nhiệm vụ của bạn là đánh giá độ tương đồng giữa giải thích gốc (con "
            "người) và giải thích của LLM cho một câu thành ngữ/tục ngữ, dựa trên các tiêu chí sau:",
            "Với vai trò một chuyên gia tiếng Việt, hãy so sánh giải thích của LLM với giải thích gốc do con "
            "người viết cho một câu thành ngữ/tục ngữ, theo năm tiêu chí dưới đây:",
        )
        + f"\n\n{FIG8_EXAMPLES}\n\n"
        + FIG7_TASK.replace(
            "Độ tương đồng tổng thể: hãy suy nghĩ sau đó chỉ trả về duy nhất đánh giá của độ tương đồng tổng "
            "thể và không giải thích gì thêm",
            "Độ tương đồng tổng thể: cân nhắc kỹ rồi chỉ ghi điểm độ tương đồng tổng thể, không thêm lời giải "
            "thích nào",
        ),
        FIG7_INSTRUCTIONS.replace(
            "Bạn là chuyên gia ngôn ngữ. Nhiệm vụ của bạn là đánh giá độ tương đồng giữa giải thích gốc (con "
            "người) và giải thích của LLM cho một câu thành ngữ/tục ngữ, dựa trên các tiêu chí sau:",
            "Nhiệm vụ: chấm mức độ giải thích của LLM cho một câu thành ngữ/tục ngữ giống với giải thích gốc "
            "của con người. Hãy dùng các tiêu chí sau:",
        )
        + f"\n\n{FIG8_EXAMPLES}\n\n"
        + FIG7_TASK.replace(
            "Độ tương đồng tổng thể: hãy suy nghĩ sau đó chỉ trả về duy nhất đánh giá của độ tương đồng tổng "
            "thể và không giải thích gì thêm",
            "Độ tương đồng tổng thể: sau khi suy nghĩ, chỉ trả lời bằng điểm độ tương đồng tổng thể, không "
            "viết gì khác",
        ),
        FIG7_INSTRUCTIONS.replace(
            "Bạn là chuyên gia ngôn ngữ. Nhiệm vụ của bạn là đánh giá độ tương đồng giữa giải thích gốc (con "
            "người) và giải thích của LLM cho một câu thành ngữ/tục ngữ, dựa trên các tiêu chí sau:",
            "Bạn đang chấm bài giải nghĩa thành ngữ, tục ngữ tiếng Việt: giải thích gốc của con người là chuẩn, "
            "giải thích của LLM là bài cần chấm. Các tiêu chí:",
        )
        + f"\n\n{FIG8_EXAMPLES}\n\n"
        + FIG7_TASK.replace(
            "Độ tương đồng tổng thể: hãy suy nghĩ sau đó chỉ trả về duy nhất đánh giá của độ tương đồng tổng "
            "thể và không giải thích gì thêm",
            "Độ tương đồng tổng thể: hãy cân nhắc, rồi chỉ đưa ra điểm độ tương đồng tổng thể và không giải thích",
        ),
    ),
}

OURS_JUDGE_PAIRWISE = (
    "Bạn là chuyên gia ngôn ngữ. Dưới đây là một câu thành ngữ/tục ngữ, giải thích gốc của con người và hai "
    "giải thích do LLM viết. Giải thích nào đúng và sát với ý nghĩa của câu hơn, lấy giải thích gốc làm "
    "chuẩn?\n"
    "\n"
    "Thành ngữ/Tục ngữ: {phrase}\n"
    "Giải thích gốc: {explanation}\n"
    "\n"
    "Giải thích 1: {first}\n"
    "\n"
    "Giải thích 2: {second}\n"
    "\n"
    "Chỉ trả lời duy nhất một số: 1 nếu giải thích 1 tốt hơn, 2 nếu giải thích 2 tốt hơn. Không giải thích, "
    "không thêm ký tự nào khác."
)


def _paraphrase_prompts() -> list[dict]:
    prompts = []
    for strategy, texts in JUDGE_PARAPHRASES.items():
        for number, text in enumerate(texts, start=1):
            prompts.append(
                {
                    "name": f"{strategy} (paraphrase {number})",
                    "kind": JUDGE,
                    "messages": _user(text),
                    "reference": OURS_PARAPHRASE.format(strategy=strategy),
                    "ours": True,
                    "paraphrase_of": strategy,
                }
            )
    return prompts


# Built in like BUILTIN_PROMPTS, by migrations/0010_judge_bias (a frozen copy, as 0002 is of those).
BIAS_PROMPTS: list[dict] = [
    *_paraphrase_prompts(),
    {
        "name": PAIRWISE,
        "kind": JUDGE,
        "messages": _user(OURS_JUDGE_PAIRWISE),
        "reference": OURS_PAIRWISE,
        "ours": True,
        "paraphrase_of": "",
    },
]
