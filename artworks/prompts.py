"""The prompts of *Pragmatics Meets Culture*, quoted from its Appendix A.1 and §3.1.

The wording is the paper's. The paper's text lost its line breaks, so the breaks
between the bold headings and numbered inputs are ours; ``{{``/``}}`` are the paper's
own str.format escapes and render as single braces. Two additions are marked where
they are made: the JSON shape of the symbols reply, and the Chinese translations of
the listener prompts (the paper says it uses Chinese versions but does not print them).
"""

import hashlib
import json

# -- question construction (§3.1) ------------------------------------------------

SYMBOLS = (
    "**Task:** Given an artwork and a target culture, analyze the visible elements and classify them into two "
    "categories:\n"
    "1. Symbols: Visual elements in the artwork that are widely recognized symbols within {school} culture.\n"
    "2. Non-symbols: Visual elements in this artwork that are not cultural symbols within {school} culture.\n"
    "**Instructions:**\n"
    "- Use concise, specific names for elements.\n"
    "- Remove duplicates and merge close variants.\n"
    "- For each symbolic element, provide a short, plain-language meaning.\n"
    '- If no symbolic elements are present, return an empty object for "symbols".\n'
    '- The "non-symbols" field must always contain at least one element.\n'
    "- Do not include explanations, commentary, or formatting outside the JSON."
    # Our addition: the paper names the fields but prints no output schema, and a
    # reply must be parseable without guessing the shape.
    '\nReturn a single JSON object of this shape: {{"symbols": {{"name": "meaning", ...}}, '
    '"non-symbols": ["name", ...]}}'
)

BACKGROUND = (
    "**Task:** You will be given an art comment and a list of cultural symbols related to this artwork. Based on "
    "this, generate a comprehensive cultural and historical background for the artwork. Your response should:\n"
    "- Include information about key figures, significant events, locations depicted.\n"
    "- Explain the meaning of each provided cultural symbol within the context of {school} culture. Do not "
    "discuss any symbols that are not included in the provided cultural symbols list.\n"
    "- Write a self-contained background without referencing the original comment or the list cultural symbols "
    "directly.\n"
    "**Art Comment:** {C}\n"
    "**Cultural Symbols:** {S}\n"
    "**Background:**"
)

ATTUNED_QUESTIONS = (
    "**TASK:** You will receive background information and a list of cultural symbols related to this artwork. "
    "Based on this information, create challenging, fact-based multiple-choice questions that focus on the "
    "cultural symbols in the artwork. Follow these guidelines:\n"
    "1. Question:\n"
    "- Create one question per cultural symbol in the provided list.\n"
    "- Each question should require understanding of both the artwork and the provided background information.\n"
    '- The questions must be self-contained, without referencing terms like "background information".\n'
    "- The questions should be independent of each other. If no cultural symbols are provided, return an empty "
    "list.\n"
    "2. Answer choices:\n"
    "- Provide 1 correct answer and 5 plausible but incorrect answers.\n"
    "- All the answers should be similar in length, but clearly distinct in meaning.\n"
    "- Avoid answers that are too vague, overly specific, opinion-based, or misleading.\n"
    "3. Language:\n"
    "- Keep the language clear and the vocabulary simple.\n"
    "Return your output as a list of JSON objects in the following strict format, do not include ```json or any "
    "extra text:\n"
    "[\n"
    "{{\n"
    '"subject": "the symbolic element in the artwork",\n'
    '"question": "question text",\n'
    '"answer": "the correct answer",\n'
    '"type": "symbolism",\n'
    '"plausible_answers": [\n'
    '"plausible answer 1",\n'
    '"plausible answer 2",\n'
    '"plausible answer 3",\n'
    '"plausible answer 4",\n'
    '"plausible answer 5"\n'
    "]\n"
    "}},\n"
    "]\n"
    "Example:\n"
    "**Background:** This Japanese woodblock print, likely from the Edo period (1603--1868), depicts a tranquil "
    "winter landscape where travelers make their way through snow-covered countryside. The Edo era was a time of "
    "significant cultural growth in Japan, marked by the rise of the merchant class and the widespread popularity "
    "of ukiyo-e, an art genre that portrayed scenes of daily life, nature, and travel. In the print, the figures "
    "wear traditional clothing such as straw hats and winter robes, while a horse carrying goods suggests a "
    "commercial trip or pilgrimage, both common during that time. Horses in Japanese folklore often symbolize "
    "travel, endurance, and at times divine guidance. The subdued tones of black and gray, paired with selective "
    "touches of color on the horse, travelers, signs, and seals, create a contemplative atmosphere and draw "
    "attention to important narrative elements. Snow in Japanese art frequently represents purity and calm, "
    "reflecting both Shinto and Buddhist aesthetics. The red seals and kanji inscriptions serve artistic and "
    "documentary functions, indicating authenticity and possibly identifying the artist or location. Overall, the "
    "print embodies the Edo period’s appreciation for nature, seasonal transitions, and the quiet dignity of "
    "everyday life.\n"
    "**Cultural Symbols:** horse, snow\n"
    "**Output:**\n"
    "[\n"
    "{{\n"
    '"subject": "Horse",\n'
    '"question": "In the Edo-period winter scene, what does the horse most strongly symbolize?",\n'
    '"answer": "Travel and endurance, and sometimes divine guidance",\n'
    '"type": "symbolism",\n'
    '"plausible_answers": [\n'
    '"Wealth and prosperity in rural communities",\n'
    '"Strength and dominance in feudal society",\n'
    '"Agricultural abundance during winter months",\n'
    '"Protection against harsh seasonal conditions",\n'
    '"Status and power of the merchant class"\n'
    "]\n"
    "}},\n"
    "{{\n"
    '"subject": "Snow",\n'
    '"question": "In Japanese art, what does snow typically represent in a scene like this?",\n'
    '"answer": "Purity and tranquility, reflecting Shinto and Buddhist aesthetics.",\n'
    '"type": "symbolism",\n'
    '"plausible_answers": [\n'
    '"Isolation and hardship as common themes in winter travel",\n'
    '"Impermanence and beauty as central ideas in seasonal change",\n'
    '"Economic decline and scarcity as effects of cold weather",\n'
    '"Celebration and joy as part of traditional winter festivals",\n'
    '"Divine punishment and suffering as warnings in folklore"\n'
    "]\n"
    "}}\n"
    "]\n"
    "**Background:** {B}\n"
    "**Cultural Symbols:** {S}\n"
    "**Output:**"
)

# The paper prints this one with single braces: it has no placeholder, so it is not formatted.
AGNOSTIC_QUESTIONS = (
    "TASK: Based on the artwork, generate two easy fact-based multiple-choice questions that meet the following "
    "criteria:\n"
    "- Each question must be answerable solely by observing the artwork, without requiring any external context "
    "such as cultural or historical background.\n"
    "- Base each question on important content from the artwork; avoid trivial content.\n"
    "- Each question should be independent—avoid overlapping content between the two.\n"
    "- Each question should have one correct answer and five plausible but incorrect answer choices.\n"
    "- All the answer choices should be similar in length but clearly distinct in meaning.\n"
    "- Avoid answers that are too vague, overly specific, opinion-based, or misleading.\n"
    "- Keep the language clear and the vocabulary simple.\n"
    "Return your output as a list of JSON objects in the following strict format:\n"
    "[\n"
    "{\n"
    '"question": "question text",\n'
    '"answer": "a short sentence as the answer",\n'
    '"type": "easy",\n'
    '"plausible_answers": [\n'
    '"plausible answer 1",\n'
    '"plausible answer 2",\n'
    '"plausible answer 3",\n'
    '"plausible answer 4",\n'
    '"plausible answer 5"\n'
    "]\n"
    "},\n"
    "]\n"
    "**Example Output:**\n"
    "[\n"
    "{\n"
    '"question": "What type of weather is shown in the artwork?",\n'
    '"answer": "Snow is falling and the ground is covered in snow",\n'
    '"type": "easy",\n'
    '"plausible_answers": [\n'
    '"Rain is falling and the ground is wet",\n'
    '"The sun is shining and the sky is clear",\n'
    '"Strong winds are blowing through the trees",\n'
    '"Fog is covering the landscape and houses",\n'
    '"Lightning is striking near the mountain"\n'
    "]\n"
    "},\n"
    "{\n"
    '"question": "What are the people in the artwork doing?",\n'
    '"answer": "Walking along a snowy path with a horse carrying goods",\n'
    '"type": "easy",\n'
    '"plausible_answers": [\n'
    '"Fishing in a river near the snowy trees",\n'
    '"Dancing in a field covered with snow",\n'
    '"Building a house beside the snowy road",\n'
    '"Sitting under a tree and reading a book",\n'
    '"Climbing a mountain with heavy backpacks"\n'
    "]\n"
    "}\n"
    "]\n"
    "**Output:**"
)

# -- speakers (§3.1, §4) ------------------------------------------------------------

DESCRIPTION = (
    "You will receive basic information about this artwork, and your task is to write an English description of "
    "the artwork in 75 words. The description should be tailored for an audience that identifies as culturally "
    "{L} and is interested in deepening their understanding of the artwork. Artwork information: {I}."
)

# -- the simulated listener (Eq 1, Eq 3) and the pragmatic speaker's listener (Eq 4) --

LISTENER_EN = (
    "**Task:** Imagine you are an {L}, also consider yourself culturally {L} and are {FAMILIARITY}. Your job is to "
    "decide whether the proposed answer is ’Correct’ or ’Incorrect’ based on both the artwork and its "
    "introduction. Others will read your evaluation, so ensure it reflects the perspective of the persona "
    "described above.\n"
    "**Inputs:**\n"
    "1. Question: {Q}\n"
    "2. Introduction to the artwork: {D}\n"
    "3. Proposed answer: {A_i}\n"
    "**Assessments:** The answer is (exactly one word: Correct or Incorrect; no additional text):"
)

# Eq 3 is the paper's chain-of-thought prompt without a description. We run it without
# the chain of thought: {R_L} is left empty, so the listener answers from the question alone.
NO_DESCRIPTION_EN = (
    "**Task:** Imagine you are an {L}, also consider yourself culturally {L} and are {FAMILIARITY}. Your job is to "
    "decide whether the proposed answer is ’Correct’ or ’Incorrect’. Others will read your evaluation, so ensure "
    "it reflects the perspective of the persona described above.\n"
    "**Inputs:**\n"
    "1. Question: {Q}\n"
    "2. Proposed answer: {A_i}\n"
    "**Assessments:** {R_L}\n"
    "Therefore, the answer is:"
)

PRAGMATIC_LISTENER_EN = (
    "**Task:** Imagine you are an {L}, also consider yourself culturally {L}. Your job is to decide whether the "
    "proposed answer is ’Correct’ or ’Incorrect’ based on both the artwork and its introduction. Others will read "
    "your evaluation, so ensure it reflects the perspective of the persona described above.\n"
    "**Inputs:**\n"
    "1. Question: {Q}\n"
    "2. Introduction to the artwork: {D}\n"
    "3. Proposed answer: {A_i}\n"
    "**Assessments:** The answer is (exactly one word: Correct or Incorrect; no additional text):"
)

# Our translations. The answer words stay the English tokens Correct / Incorrect, and
# the prompt says so, so that P(Correct) reads the same tokens in both languages.
LISTENER_ZH = (
    "**任务：** 想象你是一位{L}人，同时认为自己在文化上属于{L}文化，并且{FAMILIARITY}。你的任务是根据艺术作品本身"
    "及其介绍，判断所给答案是“Correct”（正确）还是“Incorrect”（错误）。其他人会阅读你的评估，因此请确保它体现上述"
    "人物的视角。\n"
    "**输入：**\n"
    "1. 问题：{Q}\n"
    "2. 艺术作品介绍：{D}\n"
    "3. 所给答案：{A_i}\n"
    "**评估：** 答案是（只用一个英文单词回答：Correct 或 Incorrect；不要添加任何其他文字）："
)

NO_DESCRIPTION_ZH = (
    "**任务：** 想象你是一位{L}人，同时认为自己在文化上属于{L}文化，并且{FAMILIARITY}。你的任务是判断所给答案是"
    "“Correct”（正确）还是“Incorrect”（错误）。其他人会阅读你的评估，因此请确保它体现上述人物的视角。\n"
    "**输入：**\n"
    "1. 问题：{Q}\n"
    "2. 所给答案：{A_i}\n"
    "**评估：** {R_L}\n"
    "因此，答案是（只用一个英文单词回答：Correct 或 Incorrect）："
)

PRAGMATIC_LISTENER_ZH = (
    "**任务：** 想象你是一位{L}人，同时认为自己在文化上属于{L}文化。你的任务是根据艺术作品本身及其介绍，判断所给答案"
    "是“Correct”（正确）还是“Incorrect”（错误）。其他人会阅读你的评估，因此请确保它体现上述人物的视角。\n"
    "**输入：**\n"
    "1. 问题：{Q}\n"
    "2. 艺术作品介绍：{D}\n"
    "3. 所给答案：{A_i}\n"
    "**评估：** 答案是（只用一个英文单词回答：Correct 或 Incorrect；不要添加任何其他文字）："
)

FAMILIARITY = {
    "en": {True: "familiar with the culture of this artwork", False: "unfamiliar with the culture of this artwork"},
    "zh": {True: "熟悉这件艺术作品所属的文化", False: "不熟悉这件艺术作品所属的文化"},
}

# How a group is named inside the prompts: "an American", "一位中国人".
GROUP_NAMES = {
    "en": {"american": "American", "chinese": "Chinese"},
    "zh": {"american": "美国", "chinese": "中国"},
}

CORRECT, INCORRECT = "Correct", "Incorrect"
ANSWER_CHOICES = [CORRECT, INCORRECT]


def listener_language(group: str) -> str:
    """The paper asks the Chinese listener in Chinese and every other listener in English."""
    return "zh" if group.strip().lower() == "chinese" else "en"


def group_name(group: str, language: str = "en") -> str:
    key = group.strip().lower()
    return GROUP_NAMES[language].get(key, group if language == "zh" else group[:1].upper() + group[1:])


def listener_prompt(
    *, group: str, familiar: bool | None, question: str, answer: str, description: str | None, pragmatic: bool = False
) -> str:
    """Eq 1 (a description), Eq 3 (``description=None``) or, with ``pragmatic``, Eq 4."""
    language = listener_language(group)
    if pragmatic:
        template = PRAGMATIC_LISTENER_ZH if language == "zh" else PRAGMATIC_LISTENER_EN
    elif description is None:
        template = NO_DESCRIPTION_ZH if language == "zh" else NO_DESCRIPTION_EN
    else:
        template = LISTENER_ZH if language == "zh" else LISTENER_EN
    values = {
        "L": group_name(group, language),
        "Q": question,
        "A_i": answer,
        "D": description or "",
        "R_L": "",
        "FAMILIARITY": FAMILIARITY[language][bool(familiar)],
    }
    return template.format(**values)


def artwork_information(*, title: str, artist: str, date: str) -> str:
    """The paper's I: "Title: {TITLE}, Artist: {ARTIST}, Date: {DATE}"."""
    return f"Title: {title}, Artist: {artist}, Date: {date}"


def description_prompt(*, group: str, information: str) -> str:
    return DESCRIPTION.format(L=group_name(group, "en"), I=information)


def symbols_prompt(*, school: str) -> str:
    return SYMBOLS.format(school=group_name(school, "en"))


def background_prompt(*, school: str, comment: str, symbols: list[str]) -> str:
    return BACKGROUND.format(school=group_name(school, "en"), C=comment, S=", ".join(symbols))


def attuned_questions_prompt(*, background: str, symbols: list[str]) -> str:
    return ATTUNED_QUESTIONS.format(B=background, S=", ".join(symbols))


def agnostic_questions_prompt() -> str:
    return AGNOSTIC_QUESTIONS


def prompts_hash() -> str:
    """One digest of every template, recorded with a run."""
    templates = [
        SYMBOLS,
        BACKGROUND,
        ATTUNED_QUESTIONS,
        AGNOSTIC_QUESTIONS,
        DESCRIPTION,
        LISTENER_EN,
        NO_DESCRIPTION_EN,
        PRAGMATIC_LISTENER_EN,
        LISTENER_ZH,
        NO_DESCRIPTION_ZH,
        PRAGMATIC_LISTENER_ZH,
        json.dumps(FAMILIARITY, ensure_ascii=False),
    ]
    return hashlib.sha256("\n\x00".join(templates).encode()).hexdigest()
