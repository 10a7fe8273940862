"""The built-in VIVID prompts, rendering, hashing and the 3-shot classification conversation."""

import importlib
import os
import unicodedata
from pathlib import Path

import pytest
from django.apps import apps as django_apps

from annotation.models import Dataset, Theme, Trait
from annotation.services import expression_create
from evaluation import prompts
from evaluation.models import PromptTemplate
from evaluation.prompts import (
    BIAS_PROMPTS,
    BUILTIN_PROMPTS,
    CLASSIFICATION,
    GENERATION,
    JUDGE,
    PLACEHOLDERS,
    Shot,
    builtin_prompt,
    classification_messages,
    gold_answer,
    placeholders,
    render,
    select_shots,
    shot_pool,
    template_hash,
    topic_answer,
    traits_answer,
)
from llm.models import ModelConfig, ModelThrottle

PAPER = Path(
    os.environ.get(
        "VIVID_PAPER_TEXT",
        Path(__file__).resolve().parents[3] / "shared" / "seeds" / "000_99aa818526d6298b.unescaped.txt",
    )
)
VALUES = {"phrase": "Nước đổ đầu vịt", "explanation": "Nói mãi không nghe.", "response": "Khuyên mãi vô ích."}


def _despaced(text: str) -> str:
    return "".join(text.split())


def _content(kind: str, name: str) -> str:
    return builtin_prompt(kind, name)["messages"][0]["content"]


def test_it_ships_every_prompt_the_protocol_names_with_its_provenance():
    keys = {(p["kind"], p["name"]) for p in BUILTIN_PROMPTS}
    assert keys == {
        (GENERATION, "zero-shot"),
        (GENERATION, "few-shot"),
        (JUDGE, "zero-shot"),
        (JUDGE, "demonstration"),
        (JUDGE, "cot"),
        (JUDGE, "aspect"),
        (CLASSIFICATION, "topic"),
        (CLASSIFICATION, "traits"),
    }
    assert len(BUILTIN_PROMPTS) == len(keys)
    references = {(p["kind"], p["name"]): (p["reference"], p["ours"]) for p in BUILTIN_PROMPTS}
    assert references[(GENERATION, "zero-shot")] == ("VIVID Fig. 5", False)
    assert references[(GENERATION, "few-shot")] == ("VIVID Fig. 6", False)
    assert references[(JUDGE, "aspect")][0].startswith("VIVID Fig. 7") and "Fig. 8" in references[(JUDGE, "aspect")][0]
    assert references[(CLASSIFICATION, "topic")] == ("VIVID Fig. 9", False)
    assert references[(CLASSIFICATION, "traits")] == ("VIVID Fig. 10", False)
    for strategy in ("zero-shot", "demonstration", "cot"):
        assert references[(JUDGE, strategy)] == ("ours, after VIVID §4.1", True)


@pytest.mark.parametrize("prompt", BUILTIN_PROMPTS, ids=lambda p: f"{p['kind']}-{p['name']}")
def test_it_renders_every_builtin_with_exactly_its_kinds_placeholders(prompt):
    assert placeholders(prompt["messages"]) == set(PLACEHOLDERS[prompt["kind"]])
    rendered = render(prompt["messages"], **VALUES)
    text = rendered[0]["content"]
    assert "{" not in text and "}" not in text
    assert VALUES["phrase"] in text
    if prompt["kind"] == JUDGE:
        assert VALUES["explanation"] in text and VALUES["response"] in text
    # The stored template is untouched and written in composed (NFC) Vietnamese.
    assert "{phrase}" in prompt["messages"][0]["content"]
    assert unicodedata.is_normalized("NFC", prompt["messages"][0]["content"])
    assert [m["role"] for m in rendered] == ["user"]


def test_it_names_the_missing_placeholder():
    with pytest.raises(KeyError, match=r"\{response\}"):
        render(builtin_prompt(JUDGE, "aspect")["messages"], phrase="x", explanation="y")
    with pytest.raises(KeyError, match=r"\{phrase\}"):
        render(builtin_prompt(GENERATION, "zero-shot")["messages"])


def test_it_keeps_escaped_braces_literal_and_refuses_positional_fields():
    template = [{"role": "system", "content": 'JSON: {{"score": n}}'}, {"role": "user", "content": "{phrase}"}]
    assert render(template, phrase="x") == [
        {"role": "system", "content": 'JSON: {"score": n}'},
        {"role": "user", "content": "x"},
    ]
    assert placeholders(template) == {"phrase"}
    with pytest.raises(ValueError, match="named placeholders"):
        render([{"role": "user", "content": "{}"}], phrase="x")
    with pytest.raises(ValueError, match="named placeholders"):
        placeholders([{"role": "user", "content": "{0}"}])


def test_it_renders_the_text_parts_of_multimodal_messages_only():
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    template = [{"role": "user", "content": [{"type": "text", "text": "Tranh: {phrase}"}, image]}]
    assert render(template, phrase="x")[0]["content"] == [{"type": "text", "text": "Tranh: x"}, image]
    assert template[0]["content"][0]["text"] == "Tranh: {phrase}"


def test_it_hashes_templates_stably_and_distinctly():
    hashes = [template_hash(p["messages"]) for p in BUILTIN_PROMPTS]
    assert len(set(hashes)) == len(hashes)
    assert all(len(h) == 64 and int(h, 16) >= 0 for h in hashes)
    messages = [{"role": "user", "content": "Giải thích: {phrase}"}]
    assert template_hash(messages) == template_hash([{"content": "Giải thích: {phrase}", "role": "user"}])
    # Pinned: a change here means every stored content hash is wrong.
    assert template_hash(messages) == "c06e8784886df9ddf7ace0601c0f52fc78775c4b93122b3b827d9964f6624c54"
    assert template_hash(messages) != template_hash([{"role": "user", "content": "Giải thích:  {phrase}"}])
    nfd = unicodedata.normalize("NFD", messages[0]["content"])
    assert template_hash(messages) != template_hash([{"role": "user", "content": nfd}])


def test_it_quotes_the_figures_with_the_lost_spaces_and_line_breaks_restored():
    assert (
        _content(GENERATION, "zero-shot") == "Giải thích ngắn gọn bằng tiếng Việt ý nghĩa câu thành ngữ sau:\n{phrase}"
    )
    few_shot = _content(GENERATION, "few-shot")
    assert "Nhiệm vụ của bạn là giải thích bằng tiếng Việt ý nghĩa của câu thành ngữ hoặc tục ngữ sau" in few_shot
    assert "Ví dụ 1:\n“dân chỉ công bộc”\nGiải thích: Câu tục ngữ" in few_shot
    assert "Ví dụ 2:\n“Cần tái cải nhừ”" in few_shot and "Ví dụ 3:\n“ăn cho thủng nổi trôi rế”" in few_shot
    assert few_shot.endswith("Bây giờ, hãy giải thích câu sau:\n{phrase}\ngiải thích:")
    aspect = _content(JUDGE, "aspect")
    assert aspect.startswith("[Hướng dẫn]\nBạn là chuyên gia ngôn ngữ.")
    assert "\n1. Độ chính xác của ý nghĩa cốt lõi (0–5 điểm): Giải thích của LLM nắm bắt đúng" in aspect
    assert "Nếu tiêu chí 1 được 0 điểm thì Độ tương đồng tổng thể được 0." in aspect
    assert "Giải thích của Con người: {explanation}\nGiải thích của LLM: {response}\n" in aspect
    # Fig. 8's calibration examples sit where Fig. 7 marks them: after the criteria, before the task.
    assert aspect.index("(5: Rất tương đồng, 0: Không tương đồng)") < aspect.index("Ví dụ Minh họa 1")
    assert aspect.index("Ví dụ Minh họa 2") < aspect.index("[Nhiệm vụ cần đánh giá]")
    assert (
        "Thành ngữ/Tục ngữ: Chưa đủ lông đủ cánh\nGiải thích nghĩa gốc: Còn non nớt, chưa đủ khả năng tự lập." in aspect
    )
    assert "3. Chất lượng diễn đạt, sự rõ ràng, lưu loát: 3/5\n4. Độ đầy đủ: 1/5\nĐộ tương đồng tổng thể: 1/5" in aspect
    topic = _content(CLASSIFICATION, "topic")
    assert topic.startswith("Bạn là chuyên gia ngôn ngữ. Dưới đây là một câu thành ngữ/tục ngữ: “{phrase}”\n")
    assert "\n7. Các chủ đề khác (nếu không phù hợp với các mục trên)\n" in topic
    assert topic.endswith("Chỉ trả lời duy nhất một số (1–7). Không giải thích, không thêm ký tự nào khác.")
    traits = _content(CLASSIFICATION, "traits")
    assert "xác định câu này thuộc những đặc điểm nào trong danh sách dưới đây" in traits
    assert "(ví dụ: “1,3,5”). Nếu không thuộc đặc điểm nào, trả về chuỗi rỗng “”." in traits
    assert "1. Là câu tục ngữ không mang nghĩa bóng (chỉ mang nghĩa đen/kỹ thuật). Ví dụ: Da đồng lông móc" in traits
    assert "4. Thể hiện kinh nghiệm dân gian xưa của người Việt Nam." in traits
    assert "5. Mang sắc thái mỉa mai, châm biếm hoặc tiêu cực. Ví dụ: Tốt mẽ khoe màu." in traits


def test_it_matches_the_paper_text_but_for_whitespace():
    if not PAPER.exists():
        pytest.skip(f"the paper text is not at {PAPER} (set VIVID_PAPER_TEXT)")
    paper = _despaced(PAPER.read_text(encoding="utf-8"))
    # Fig. 7 prints the two explanations as {ground_truth} and {llm_output}.
    as_printed = {"{explanation}": "{ground_truth}", "{response}": "{llm_output}"}
    quoted = [
        prompts.FIG5_ZERO_SHOT,
        prompts.FIG6_FEW_SHOT,
        prompts.FIG7_INSTRUCTIONS,
        prompts.FIG8_EXAMPLES,
        prompts.FIG7_TASK,
        prompts.FIG9_TOPIC,
        prompts.FIG10_TRAITS,
    ]
    for text in quoted:
        for ours, printed in as_printed.items():
            text = text.replace(ours, printed)
        assert _despaced(text) in paper, text[:60]


def test_it_writes_its_own_judge_prompts_in_vietnamese_with_a_0_to_5_scale():
    zero = _content(JUDGE, "zero-shot")
    demo = _content(JUDGE, "demonstration")
    cot = _content(JUDGE, "cot")
    for text in (zero, demo, cot):
        assert "từ 0 đến 5" in text and "Giải thích gốc: {explanation}" in text
    assert "Ví dụ" not in zero and "suy luận" not in zero
    assert demo.count("\nĐiểm: ") == 4 and {"Điểm: 5", "Điểm: 0"} <= set(demo.splitlines())
    assert "suy luận từng bước" in cot and "dòng cuối cùng" in cot and "“Điểm: N”" in cot


def test_it_demonstrates_the_judge_on_idioms_outside_the_demo_dataset():
    import csv

    from annotation.services import DEMO_CSV

    with DEMO_CSV.open(encoding="utf-8", newline="") as handle:
        demo = {row["expression"].casefold() for row in csv.DictReader(handle)}
    examples = [
        line.split(": ", 1)[1]
        for line in _content(JUDGE, "demonstration").splitlines()
        if line.startswith("Thành ngữ/Tục ngữ: ")
    ]
    assert examples[:-1] == ["Nước đổ đầu vịt", "Uống nước nhớ nguồn", "Vắt chanh bỏ vỏ", "Đẽo cày giữa đường"]
    assert not {e.casefold() for e in examples[:-1]} & demo


# --- classification --------------------------------------------------------------------------

POOL = [(key, f"câu {key}", str(key % 7 + 1)) for key in range(1, 21)]


def test_it_formats_gold_answers_as_the_figures_ask():
    assert topic_answer(3) == "3" and topic_answer(None) == ""
    assert traits_answer([5, 1, 3]) == "1,3,5"
    assert traits_answer([2, 2]) == "2"
    assert traits_answer([]) == ""


def test_it_draws_three_shots_never_the_item_and_the_same_for_a_seed():
    for item in range(1, 21):
        shots = select_shots(POOL, item, seed=1234)
        assert len(shots) == 3 and len(set(shots)) == 3
        assert f"câu {item}" not in [text for text, _answer in shots]
        assert shots == select_shots(list(reversed(POOL)), item, seed=1234)
    draws = {tuple(select_shots(POOL, 7, seed=seed)) for seed in range(10)}
    assert len(draws) > 1
    assert select_shots(POOL, 7, seed=1) != select_shots(POOL, 8, seed=1) or select_shots(
        POOL, 9, seed=1
    ) != select_shots(POOL, 7, seed=1)
    # The same text under another key (a duplicate row) is the item too.
    assert select_shots([(1, "a", "1"), (2, "b", "2"), (3, "a", "1")], 1, seed=0, item_text="a") == [("b", "2")]
    assert select_shots([(1, "a", "1")], 1, seed=0) == []


def test_it_builds_the_three_shot_conversation_with_the_item_last():
    shots = [("Tốt mẽ khoe màu", "5"), ("Ăn cháo đá bát", "5"), ("Kết tóc xe tơ", "3")]
    messages = classification_messages("traits", "Nuôi ong tay áo", shots)
    assert [m["role"] for m in messages] == ["user", "assistant"] * 3 + ["user"]
    assert [m["content"] for m in messages[1::2]] == ["5", "5", "3"]
    assert "“Tốt mẽ khoe màu”" in messages[0]["content"] and "Danh sách đặc điểm:" in messages[0]["content"]
    assert "“Nuôi ong tay áo”" in messages[-1]["content"]
    assert (
        messages[-1]["content"]
        == render(builtin_prompt(CLASSIFICATION, "traits")["messages"], phrase="Nuôi ong tay áo")[0]["content"]
    )
    assert all("Nuôi ong tay áo" not in m["content"] for m in messages[:-1])
    topic = classification_messages("topic", "Nuôi ong tay áo", [("Kết tóc xe tơ", "1")])
    assert "Chỉ trả lời duy nhất một số (1–7)" in topic[0]["content"] and topic[1] == {
        "role": "assistant",
        "content": "1",
    }
    with pytest.raises(ValueError, match="item itself"):
        classification_messages("topic", "Nuôi ong tay áo", [("Nuôi ong tay áo", "5")])
    with pytest.raises(KeyError):
        classification_messages("sentiment", "x", [])


def test_it_sends_a_custom_templates_system_message_once():
    template = [{"role": "system", "content": "Trả lời ngắn."}, {"role": "user", "content": "Câu: {phrase}"}]
    messages = classification_messages("topic", "c", [("a", "1"), ("b", "2")], template=template)
    assert classification_messages(template, "c", [("a", "1"), ("b", "2")]) == messages
    assert messages == [
        {"role": "system", "content": "Trả lời ngắn."},
        {"role": "user", "content": "Câu: a"},
        {"role": "assistant", "content": "1"},
        {"role": "user", "content": "Câu: b"},
        {"role": "assistant", "content": "2"},
        {"role": "user", "content": "Câu: c"},
    ]


@pytest.mark.django_db
def test_it_reads_gold_answers_from_the_corpus():
    dataset = Dataset.objects.create(name="gold")
    themed = expression_create(
        dataset=dataset,
        text="Ếch ngồi đáy giếng",
        explanation="...",
        theme=Theme.objects.get(number=3),
        traits=Trait.objects.filter(number__in=[5, 3]),
    )
    bare = expression_create(dataset=dataset, text="Xa mặt cách lòng", explanation="...")
    assert gold_answer("topic", themed) == "3"
    assert gold_answer("traits", themed) == "3,5"
    assert gold_answer("topic", bare) is None
    assert gold_answer("traits", bare) == ""
    with pytest.raises(ValueError):
        gold_answer("sentiment", themed)
    assert shot_pool("topic", [themed, bare]) == [Shot(themed.pk, "Ếch ngồi đáy giếng", "3")]
    pool = shot_pool("traits", dataset.expressions.prefetch_related("traits").select_related("theme"))
    assert pool == [Shot(themed.pk, "Ếch ngồi đáy giếng", "3,5"), Shot(bare.pk, "Xa mặt cách lòng", "")]
    assert select_shots(pool, bare.pk, seed=1) == [("Ếch ngồi đáy giếng", "3,5")]


# --- the data migration ----------------------------------------------------------------------


@pytest.mark.django_db
def test_it_creates_the_builtin_rows_once_whatever_the_reruns():
    rows = {row.content_hash: row for row in PromptTemplate.objects.filter(builtin=True)}
    for prompt in BUILTIN_PROMPTS:
        row = rows[template_hash(prompt["messages"])]
        assert (row.name, row.kind, row.messages, row.reference, row.ours) == (
            prompt["name"],
            prompt["kind"],
            prompt["messages"],
            prompt["reference"],
            prompt["ours"],
        )
    # The judge bias prompts (paraphrases, pairwise) are built in by their own migration.
    assert len(rows) == len(BUILTIN_PROMPTS) + len(BIAS_PROMPTS)
    model = ModelConfig.objects.get(name="smollm2-135m")
    assert (model.provider, model.model_id, model.max_concurrency, model.timeout, model.builtin) == (
        "transformers",
        "smollm2-135m",
        1,
        120.0,
        True,
    )

    # The engine leases one slot row per concurrent request: the rows must exist.
    assert list(model.slots.values_list("number", "holder")) == [(0, "")]
    assert ModelThrottle.objects.filter(model=model).count() == 1

    migration = importlib.import_module("evaluation.migrations.0002_builtin_prompts_and_model")
    migration.create_builtins(_AppsAfterTheLlmMove(), None)
    migration.create_builtins(_AppsAfterTheLlmMove(), None)
    assert PromptTemplate.objects.count() == len(BUILTIN_PROMPTS) + len(BIAS_PROMPTS)
    assert ModelConfig.objects.filter(name="smollm2-135m").count() == 1
    assert model.slots.count() == 1 and ModelThrottle.objects.filter(model=model).count() == 1


class _AppsAfterTheLlmMove:
    """The models the migration asks the evaluation app for, where they live now (llm, issue #24)."""

    def get_model(self, app_label: str, name: str):
        if name in ("ModelConfig", "ModelSlot", "ModelThrottle"):
            return django_apps.get_model("llm", name)
        return django_apps.get_model(app_label, name)


def test_it_keeps_the_migrations_frozen_copy_in_step_with_the_module():
    migration = importlib.import_module("evaluation.migrations.0002_builtin_prompts_and_model")
    assert [migration._hash(p["messages"]) for p in migration.PROMPTS] == [
        template_hash(p["messages"]) for p in BUILTIN_PROMPTS
    ]
