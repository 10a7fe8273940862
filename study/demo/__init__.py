"""The demo study package, made in code: artworks drawn with Pillow and our own texts.

Nothing here comes from the paper's stimuli. Every image carries the label
"DEMO ARTWORK – drawn by code" so nobody mistakes it for real art; questions,
descriptions and self-evaluation scores were written for the demo.
``write_demo_package(folder)`` writes study.json and images/; the same inputs give
the same bytes, so writing it again changes nothing.
"""

import json
from pathlib import Path

from artworks.demo.drawings import DRAWINGS, png
from artworks.models import QC_THRESHOLD_DEFAULT

SLUG = "demo-artworks"
LABEL = "DEMO ARTWORK – drawn by code"


def _question(key, symbol, kind, question, answer, distractors):
    return {
        "id": key,
        "symbol": symbol,
        "type": kind,
        "question": question,
        "answer": answer,
        "distractors": distractors,
    }


def _descriptions(key: str, base: str, american: str, chinese: str, scores: tuple[float, float, float]) -> list[dict]:
    # The base speaker does not know its listener, so both groups get the same base text;
    # the pragmatic speaker writes for each group.
    return [
        {
            "id": f"{key}-american-base",
            "speaker": "base",
            "listener": "american",
            "model": "demo-writer",
            "text": base,
            "self_eval_score": scores[0],
        },
        {
            "id": f"{key}-american-pragmatic",
            "speaker": "pragmatic",
            "listener": "american",
            "model": "demo-writer",
            "text": american,
            "self_eval_score": scores[1],
        },
        {
            "id": f"{key}-chinese-base",
            "speaker": "base",
            "listener": "chinese",
            "model": "demo-writer",
            "text": base,
            "self_eval_score": scores[0],
        },
        {
            "id": f"{key}-chinese-pragmatic",
            "speaker": "pragmatic",
            "listener": "chinese",
            "model": "demo-writer",
            "text": chinese,
            "self_eval_score": scores[2],
        },
    ]


def _elements(*items: tuple[str, bool]) -> list[dict]:
    return [{"name": name, "is_symbol": is_symbol} for name, is_symbol in items]


ARTWORKS = [
    {
        "id": "cn-lotus",
        "title": "Lotus Pond in Summer",
        "culture": "chinese",
        "elements": _elements(
            ("lotus flowers", True),
            ("mandarin ducks", True),
            ("lotus leaves", False),
            ("dragonfly", False),
            ("pond water", False),
        ),
        "questions": [
            _question(
                "cn-lotus-q1",
                "lotus flowers",
                "attuned",
                "What does the lotus stand for in Chinese art?",
                "Purity that rises out of the mud",
                [
                    "Wealth and good fortune",
                    "Victory in battle",
                    "Mourning for the dead",
                    "The arrival of winter",
                    "The emperor's power",
                ],
            ),
            _question(
                "cn-lotus-q2",
                "mandarin ducks",
                "attuned",
                "What do the two mandarin ducks stand for?",
                "A loving, faithful couple",
                [
                    "A good harvest",
                    "Success in the imperial exams",
                    "Protection from evil spirits",
                    "A long journey",
                    "Loneliness and exile",
                ],
            ),
            _question(
                "cn-lotus-q3",
                "",
                "agnostic",
                "Which insect hovers over the pond?",
                "A dragonfly",
                ["A butterfly", "A bee", "A moth", "A grasshopper", "A ladybird"],
            ),
        ],
        "descriptions": _descriptions(
            "cn-lotus",
            "Pink lotus flowers rise above broad green leaves on a calm summer pond. Two mandarin ducks swim side "
            "by side between the stems. A blue dragonfly hovers over the water. The painting is quiet and balanced, "
            "with soft colours.",
            "Pink lotus flowers rise above broad green leaves on a calm summer pond. In China the lotus stands for "
            "purity, because it grows out of the mud yet blooms clean, much as a white lily stands for innocence in "
            "the West. Two mandarin ducks swim side by side between the stems; they are said to pair for life, so "
            "they are a Chinese emblem of a faithful couple and a common wedding wish. A blue dragonfly hovers over "
            "the water.",
            "Pink lotus flowers rise above broad green leaves on a calm summer pond. The scene recalls Zhou Dunyi's "
            "praise of the lotus that grows out of the mud unstained, the symbol of purity you know well. Two "
            "mandarin ducks swim side by side between the stems, the familiar picture of a loving, faithful couple. "
            "A blue dragonfly hovers over the water.",
            (0.42, 0.81, 0.66),
        ),
        "terms": [
            {"term": "lotus", "zh": "莲花", "wikidata": "Q16528"},
            {"term": "mandarin duck", "zh": "鸳鸯", "wikidata": ""},
        ],
    },
    {
        "id": "cn-plum",
        "title": "Plum Branch in Snow",
        "culture": "chinese",
        "elements": _elements(("plum blossoms", True), ("magpie", True), ("snow", False), ("gnarled branch", False)),
        "questions": [
            _question(
                "cn-plum-q1",
                "plum blossoms",
                "attuned",
                "What does the plum blossom stand for in Chinese art?",
                "Endurance and hope in hard times",
                [
                    "Youth and first love",
                    "Wealth from trade",
                    "The emperor's favour",
                    "Sorrow at parting",
                    "A good rice harvest",
                ],
            ),
            _question(
                "cn-plum-q2",
                "magpie",
                "attuned",
                "What does a magpie on a branch announce in Chinese tradition?",
                "Joy and good news",
                ["A death in the family", "Coming rain", "A thief nearby", "A poor harvest", "An unwelcome guest"],
            ),
            _question(
                "cn-plum-q3",
                "",
                "agnostic",
                "What covers the branch?",
                "Snow",
                ["Moss", "Sand", "Ash", "Vines", "Cobwebs"],
            ),
        ],
        "descriptions": _descriptions(
            "cn-plum",
            "A gnarled plum branch reaches across the picture. Its white and pink blossoms open while snow still "
            "covers the wood. A black-and-white magpie perches near the tip of the branch. The background is left "
            "pale and empty.",
            "A gnarled plum branch reaches across the picture. Its white and pink blossoms open while snow still "
            "covers the wood. In Chinese art the plum blossom is loved because it flowers in the cold of late winter, "
            "so it stands for endurance and hope in hard times. The magpie on the branch is a Chinese bird of good "
            "luck whose call is said to announce happy news.",
            "A gnarled plum branch reaches across the picture. Its white and pink blossoms open while snow still "
            "covers the wood, the plum's familiar strength in the cold. The magpie on the plum branch brings to mind "
            "the old picture of joy arriving with good news. The pale, empty background leaves room for the "
            "viewer's own mood.",
            (0.38, 0.77, 0.71),
        ),
        "terms": [
            {"term": "plum blossom", "zh": "梅花", "wikidata": ""},
            {"term": "magpie", "zh": "喜鹊", "wikidata": ""},
        ],
    },
    {
        "id": "cn-crane",
        "title": "Cranes at Sunrise",
        "culture": "chinese",
        "elements": _elements(("red-crowned cranes", True), ("rising sun", False), ("waves", False), ("rock", False)),
        "questions": [
            _question(
                "cn-crane-q1",
                "red-crowned cranes",
                "attuned",
                "What do cranes wish for in a Chinese painting?",
                "A long life",
                ["A safe sea voyage", "Many sons", "Victory over enemies", "Wealth from the sea", "A good marriage"],
            ),
            _question(
                "cn-crane-q2",
                "",
                "agnostic",
                "How many cranes stand on the rock?",
                "Two",
                ["One", "Three", "Four", "Five", "Six"],
            ),
        ],
        "descriptions": _descriptions(
            "cn-crane",
            "Two red-crowned cranes stand on a rock by the sea. A red sun rises behind them over blue waves. The "
            "birds have white bodies, black necks and a red patch on the head. The picture is drawn with simple "
            "shapes and bright colours.",
            "Two red-crowned cranes stand on a rock by the sea. A red sun rises behind them over blue waves. In "
            "China the crane is a bird of long life, said to live a thousand years, so a painting of cranes is a "
            "common birthday wish for an elder. The rising sun adds a hopeful feeling of a new beginning.",
            "Two red-crowned cranes stand on a rock by the sea. A red sun rises behind them over blue waves. As in "
            "the traditional wish for a life as long as the crane's, the birds stand for longevity, and the picture "
            "would suit an elder's birthday. The birds have white bodies, black necks and a red patch on the head.",
            (0.45, 0.74, 0.58),
        ),
        "terms": [{"term": "red-crowned crane", "zh": "丹顶鹤", "wikidata": ""}],
    },
    {
        "id": "cn-pine",
        "title": "Pine on a Mountain Cliff",
        "culture": "chinese",
        "elements": _elements(
            ("pine tree", True), ("bamboo", True), ("pavilion", False), ("clouds", False), ("cliff", False)
        ),
        "questions": [
            _question(
                "cn-pine-q1",
                "pine tree",
                "attuned",
                "What does the pine stand for in Chinese painting?",
                "Steadfastness and long life",
                ["Sadness at parting", "Wealth and rank", "Youth and beauty", "Victory in war", "The coming of spring"],
            ),
            _question(
                "cn-pine-q2",
                "bamboo",
                "attuned",
                "What does bamboo stand for in Chinese painting?",
                "Integrity: it bends without breaking",
                ["Wealth and good luck", "Romantic love", "Fear of the unknown", "Hunger and famine", "Royal power"],
            ),
            _question(
                "cn-pine-q3",
                "",
                "agnostic",
                "What stands at the foot of the cliff?",
                "A small pavilion",
                ["A stone bridge", "A temple gate", "A fishing boat", "A farmer's hut", "A tall pagoda"],
            ),
        ],
        "descriptions": _descriptions(
            "cn-pine",
            "A tall pine grows from a steep mountain cliff. Green bamboo grows at the foot of the rock, next to a "
            "small pavilion. Grey clouds drift around the peaks. The brushwork is simple and the colours are cool.",
            "A tall pine grows from a steep mountain cliff. In Chinese painting the pine stays green through winter, "
            "so it stands for steadfastness and a long life. Green bamboo grows at the foot of the rock, next to a "
            "small pavilion; bamboo bends in the wind without breaking, a Chinese symbol of a person of integrity. "
            "With the plum they form the Three Friends of Winter, a favourite subject of scholars.",
            "A tall pine grows from a steep mountain cliff. Green bamboo grows at the foot of the rock, next to a "
            "small pavilion. Pine and bamboo are two of the Three Friends of Winter you will recognise, here standing "
            "for a scholar's steadfast, upright character. Grey clouds drift around the peaks.",
            (0.51, 0.86, 0.62),
        ),
        "terms": [
            {"term": "pine", "zh": "松树", "wikidata": ""},
            {"term": "bamboo", "zh": "竹子", "wikidata": ""},
            {"term": "Three Friends of Winter", "zh": "岁寒三友", "wikidata": ""},
        ],
    },
    {
        "id": "am-eagle",
        "title": "Bald Eagle over the River",
        "culture": "american",
        "elements": _elements(
            ("bald eagle", True), ("olive branch", True), ("arrows", True), ("river", False), ("pine forest", False)
        ),
        "questions": [
            _question(
                "am-eagle-q1",
                "bald eagle",
                "attuned",
                "What does the bald eagle stand for in the United States?",
                "The nation and its freedom",
                [
                    "A successful hunt",
                    "Death and the afterlife",
                    "The harvest season",
                    "A wealthy family",
                    "Good luck in marriage",
                ],
            ),
            _question(
                "am-eagle-q2",
                "olive branch",
                "attuned",
                "What does the olive branch in the eagle's claw stand for?",
                "A wish for peace",
                ["A good olive harvest", "Victory in war", "Mourning", "Wealth from trade", "Religious fasting"],
            ),
            _question(
                "am-eagle-q3",
                "",
                "agnostic",
                "What flows below the eagle?",
                "A river",
                ["A glacier", "A highway", "A lava stream", "A sand dune", "A canal lock"],
            ),
        ],
        "descriptions": _descriptions(
            "am-eagle",
            "A bald eagle spreads its wings above a wide river. It holds an olive branch in one claw and a bundle "
            "of arrows in the other. Pine forests line both banks. The sky is clear and bright blue.",
            "A bald eagle spreads its wings above a wide river. It holds an olive branch in one claw and a bundle "
            "of arrows in the other, just like the eagle on the Great Seal of the United States. The olive branch "
            "means a wish for peace and the arrows a readiness to defend the country. Pine forests line both banks.",
            "A bald eagle spreads its wings above a wide river. The bald eagle is the national bird of the United "
            "States and stands for the country's freedom and strength, much as the dragon is an emblem of China. It "
            "holds an olive branch in one claw and a bundle of arrows in the other: the branch means a wish for "
            "peace, the arrows a readiness to defend. The pairing comes from the Great Seal of the United States, "
            "printed on the one-dollar bill.",
            (0.47, 0.63, 0.84),
        ),
    },
    {
        "id": "am-pumpkin",
        "title": "Pumpkin Patch in October",
        "culture": "american",
        "elements": _elements(
            ("jack-o'-lantern", True),
            ("pumpkins", True),
            ("scarecrow", False),
            ("red barn", False),
            ("falling leaves", False),
        ),
        "questions": [
            _question(
                "am-pumpkin-q1",
                "jack-o'-lantern",
                "attuned",
                "For which occasion is the carved, glowing pumpkin made?",
                "Halloween",
                ["Christmas", "Easter", "Independence Day", "New Year's Eve", "Valentine's Day"],
            ),
            _question(
                "am-pumpkin-q2",
                "pumpkins",
                "attuned",
                "What do pumpkins in a field bring to mind in American culture?",
                "The autumn harvest and Thanksgiving",
                [
                    "The start of the summer holidays",
                    "A wedding",
                    "Spring planting",
                    "A national election",
                    "Winter storms",
                ],
            ),
            _question(
                "am-pumpkin-q3",
                "",
                "agnostic",
                "What stands in front of the barn?",
                "A scarecrow",
                ["A horse", "A tractor", "A windmill", "A well", "A mailbox"],
            ),
        ],
        "descriptions": _descriptions(
            "am-pumpkin",
            "Round orange pumpkins lie in a field of dry vines. One pumpkin has a carved face with a candle glowing "
            "inside. A scarecrow stands in front of a red barn. Brown and yellow leaves are falling.",
            "Round orange pumpkins lie in a field of dry vines. One pumpkin has a carved face with a candle glowing "
            "inside, a jack-o'-lantern ready for Halloween night. A scarecrow stands in front of a red barn. The "
            "scene has the cozy feel of a family trip to pick pumpkins in October.",
            "Round orange pumpkins lie in a field of dry vines. In the United States pumpkins mark the autumn harvest "
            "and Thanksgiving, a holiday of family reunion rather like the Mid-Autumn Festival. One pumpkin has a "
            "carved face with a candle glowing inside: this jack-o'-lantern is made for Halloween, on the evening "
            "of October 31, when children in costumes go from door to door for sweets. A scarecrow stands in front "
            "of a red barn.",
            (0.36, 0.58, 0.88),
        ),
    },
    {
        "id": "am-bridge",
        "title": "Covered Bridge in New England",
        "culture": "american",
        "elements": _elements(("covered bridge", True), ("maple trees", True), ("stream", False), ("dirt road", False)),
        "questions": [
            _question(
                "am-bridge-q1",
                "covered bridge",
                "attuned",
                "What nickname did covered bridges earn in rural America?",
                "Kissing bridges",
                ["Toll bridges of the king", "Soldiers' bridges", "Bridges of sighs", "Ghost bridges", "Money bridges"],
            ),
            _question(
                "am-bridge-q2",
                "maple trees",
                "attuned",
                "What do red maple trees bring to mind in New England?",
                "The autumn foliage season",
                [
                    "The Christmas holidays",
                    "Spring cherry blossoms",
                    "A time of mourning",
                    "The gold rush",
                    "The end of the school year",
                ],
            ),
            _question(
                "am-bridge-q3",
                "",
                "agnostic",
                "What does the bridge cross?",
                "A stream",
                ["A railway", "A frozen lake", "A city street", "A deep gorge", "A highway"],
            ),
        ],
        "descriptions": _descriptions(
            "am-bridge",
            "A red wooden bridge with a roof crosses a small stream. Maple trees with red and orange leaves surround "
            "it. A dirt road leads into the dark opening of the bridge. The water is calm and reflects the colours.",
            "A red wooden bridge with a roof crosses a small stream. Covered bridges like this one are a proud piece "
            "of New England's rural heritage, and many towns still keep theirs. Maple trees with red and orange "
            "leaves surround it, the fall foliage that draws visitors every October. The water is calm and reflects "
            "the colours.",
            "A red wooden bridge with a roof crosses a small stream. In nineteenth-century America such covered "
            "bridges were nicknamed kissing bridges, because courting couples could share a moment out of sight "
            "inside. Maple trees with red and orange leaves surround it; people travel to New England to see the "
            "autumn maples, as they go to the Fragrant Hills in Beijing. A dirt road leads into the dark opening "
            "of the bridge.",
            (0.4, 0.55, 0.79),
        ),
    },
    {
        "id": "am-lighthouse",
        "title": "Lighthouse on the Maine Coast",
        "culture": "american",
        "elements": _elements(
            ("lighthouse", True), ("sailboat", False), ("seagulls", False), ("rocks", False), ("waves", False)
        ),
        "questions": [
            _question(
                "am-lighthouse-q1",
                "lighthouse",
                "attuned",
                "What does a lighthouse stand for in American stories and songs?",
                "Guidance and safety through danger",
                [
                    "Loneliness and exile",
                    "Wealth from fishing",
                    "The border with Canada",
                    "Death at sea",
                    "A royal palace",
                ],
            ),
            _question(
                "am-lighthouse-q2",
                "",
                "agnostic",
                "How many seagulls fly in the sky?",
                "Three",
                ["One", "Two", "Four", "Five", "Six"],
            ),
        ],
        "descriptions": _descriptions(
            "am-lighthouse",
            "A white lighthouse with a red top stands on dark rocks. Waves break against the shore below it. A small "
            "sailboat passes in the distance. Three seagulls fly in the sky.",
            "A white lighthouse with a red top stands on dark rocks. Its beam has guided sailors home for "
            "generations, so it stands for safety and hope in a storm. Waves break against the shore below it. A "
            "small sailboat passes in the distance.",
            "A white lighthouse with a red top stands on dark rocks. Waves break against the shore below it. In "
            "American stories and songs a lighthouse means guidance and safety, a steady light that brings sailors "
            "home through danger. The lighthouses on the rocky coast of Maine are among the best known in the "
            "United States. Three seagulls fly in the sky.",
            (0.44, 0.69, 0.83),
        ),
    },
    # Quality control: instructed-response and plainly visible answers, as Prolific allows.
    {
        "id": "qc-blue",
        "title": "Attention check: colours",
        "culture": "american",
        "qc": True,
        "elements": _elements(("blue square", False), ("white frame", False)),
        "questions": [
            _question(
                "qc-blue-q1",
                "",
                "agnostic",
                "To show you are reading, choose 'Blue'.",
                "Blue",
                ["Red", "Green", "Yellow", "Purple", "Orange"],
            ),
        ],
        "descriptions": [],
    },
    {
        "id": "qc-circles",
        "title": "Attention check: shapes",
        "culture": "chinese",
        "qc": True,
        "elements": _elements(("red circles", False), ("grey background", False)),
        "questions": [
            _question(
                "qc-circles-q1",
                "",
                "agnostic",
                "How many red circles does the picture show?",
                "Three",
                ["One", "Two", "Four", "Five", "Six"],
            ),
        ],
        "descriptions": [],
    },
]


# The Chinese group's labels (README "What is translated"): titles, element names, questions and
# options of every artwork, quality checks included (the launch checklist lists any left out).
# Descriptions stay in English, as in the paper; the glossed terms carry the Chinese.
ZH_HANS = {
    "cn-lotus": {
        "title": "夏日荷塘",
        "elements": {
            "lotus flowers": "荷花",
            "mandarin ducks": "鸳鸯",
            "lotus leaves": "荷叶",
            "dragonfly": "蜻蜓",
            "pond water": "池水",
        },
        "questions": {
            "cn-lotus-q1": {
                "question": "在中国艺术中，荷花象征什么？",
                "answer": "出淤泥而不染的纯洁",
                "distractors": ["财富与好运", "战争的胜利", "对逝者的哀悼", "冬天的到来", "皇帝的权力"],
            },
            "cn-lotus-q2": {
                "question": "这对鸳鸯象征什么？",
                "answer": "恩爱忠贞的夫妻",
                "distractors": ["丰收", "科举高中", "驱邪避凶", "远行", "孤独与流放"],
            },
            "cn-lotus-q3": {
                "question": "池塘上方飞着什么昆虫？",
                "answer": "一只蜻蜓",
                "distractors": ["一只蝴蝶", "一只蜜蜂", "一只飞蛾", "一只蚱蜢", "一只瓢虫"],
            },
        },
    },
    "cn-plum": {
        "title": "雪中梅枝",
        "elements": {"plum blossoms": "梅花", "magpie": "喜鹊", "snow": "雪", "gnarled branch": "虬曲的枝干"},
        "questions": {
            "cn-plum-q1": {
                "question": "在中国艺术中，梅花象征什么？",
                "answer": "身处逆境时的坚韧与希望",
                "distractors": ["青春与初恋", "经商致富", "皇帝的恩宠", "离别的忧伤", "稻米丰收"],
            },
            "cn-plum-q2": {
                "question": "在中国传统中，枝头的喜鹊预示着什么？",
                "answer": "喜事与好消息",
                "distractors": ["家中有人去世", "天要下雨", "附近有小偷", "收成不好", "不速之客"],
            },
            "cn-plum-q3": {
                "question": "什么覆盖着树枝？",
                "answer": "雪",
                "distractors": ["青苔", "沙子", "灰烬", "藤蔓", "蛛网"],
            },
        },
    },
    "cn-crane": {
        "title": "旭日仙鹤",
        "elements": {"red-crowned cranes": "丹顶鹤", "rising sun": "旭日", "waves": "海浪", "rock": "岩石"},
        "questions": {
            "cn-crane-q1": {
                "question": "在中国画中，鹤寄托着什么祝愿？",
                "answer": "健康长寿",
                "distractors": ["航海平安", "多子多孙", "战胜敌人", "靠海致富", "美满姻缘"],
            },
            "cn-crane-q2": {
                "question": "岩石上站着几只鹤？",
                "answer": "两只",
                "distractors": ["一只", "三只", "四只", "五只", "六只"],
            },
        },
    },
    "cn-pine": {
        "title": "山崖青松",
        "elements": {
            "pine tree": "松树",
            "bamboo": "竹子",
            "pavilion": "亭子",
            "clouds": "云雾",
            "cliff": "山崖",
        },
        "questions": {
            "cn-pine-q1": {
                "question": "在中国画中，松树象征什么？",
                "answer": "坚贞不移与健康长寿",
                "distractors": ["离别的哀愁", "财富与地位", "青春与美貌", "战争的胜利", "春天的到来"],
            },
            "cn-pine-q2": {
                "question": "在中国画中，竹子象征什么？",
                "answer": "气节：弯而不折",
                "distractors": ["财富与好运", "浪漫的爱情", "对未知的恐惧", "饥饿与饥荒", "王权"],
            },
            "cn-pine-q3": {
                "question": "山崖脚下有什么？",
                "answer": "一座小亭子",
                "distractors": ["一座石桥", "一道寺门", "一条渔船", "一间农舍", "一座高塔"],
            },
        },
    },
    "am-eagle": {
        "title": "河上的白头海雕",
        "elements": {
            "bald eagle": "白头海雕",
            "olive branch": "橄榄枝",
            "arrows": "箭",
            "river": "河流",
            "pine forest": "松林",
        },
        "questions": {
            "am-eagle-q1": {
                "question": "在美国，白头海雕象征什么？",
                "answer": "国家及其自由",
                "distractors": ["成功的狩猎", "死亡与来世", "收获的季节", "富裕的家庭", "婚姻好运"],
            },
            "am-eagle-q2": {
                "question": "海雕爪中的橄榄枝象征什么？",
                "answer": "对和平的愿望",
                "distractors": ["橄榄丰收", "战争的胜利", "哀悼", "贸易带来的财富", "宗教斋戒"],
            },
            "am-eagle-q3": {
                "question": "海雕下方流淌的是什么？",
                "answer": "一条河",
                "distractors": ["一条冰川", "一条公路", "一道熔岩流", "一座沙丘", "一道运河船闸"],
            },
        },
    },
    "am-pumpkin": {
        "title": "十月的南瓜地",
        "elements": {
            "jack-o'-lantern": "南瓜灯",
            "pumpkins": "南瓜",
            "scarecrow": "稻草人",
            "red barn": "红色谷仓",
            "falling leaves": "飘落的树叶",
        },
        "questions": {
            "am-pumpkin-q1": {
                "question": "这个刻着人脸、里面亮着烛光的南瓜是为哪个节日做的？",
                "answer": "万圣节",
                "distractors": ["圣诞节", "复活节", "美国独立日", "新年前夜", "情人节"],
            },
            "am-pumpkin-q2": {
                "question": "在美国文化中，田里的南瓜让人想到什么？",
                "answer": "秋收与感恩节",
                "distractors": ["暑假的开始", "一场婚礼", "春耕播种", "全国大选", "冬季暴风雪"],
            },
            "am-pumpkin-q3": {
                "question": "谷仓前面立着什么？",
                "answer": "一个稻草人",
                "distractors": ["一匹马", "一台拖拉机", "一座风车", "一口井", "一个邮箱"],
            },
        },
    },
    "am-bridge": {
        "title": "新英格兰的廊桥",
        "elements": {"covered bridge": "廊桥", "maple trees": "枫树", "stream": "小溪", "dirt road": "土路"},
        "questions": {
            "am-bridge-q1": {
                "question": "在美国乡村，廊桥得到了什么绰号？",
                "answer": "接吻桥",
                "distractors": ["国王的收费桥", "士兵桥", "叹息桥", "幽灵桥", "金钱桥"],
            },
            "am-bridge-q2": {
                "question": "在新英格兰，红色的枫树让人想到什么？",
                "answer": "秋季赏红叶的时节",
                "distractors": ["圣诞假期", "春天的樱花", "哀悼的日子", "淘金热", "学年的结束"],
            },
            "am-bridge-q3": {
                "question": "这座桥跨过什么？",
                "answer": "一条小溪",
                "distractors": ["一条铁路", "一片结冰的湖", "一条城市街道", "一道深谷", "一条高速公路"],
            },
        },
    },
    "am-lighthouse": {
        "title": "缅因海岸的灯塔",
        "elements": {
            "lighthouse": "灯塔",
            "sailboat": "帆船",
            "seagulls": "海鸥",
            "rocks": "礁石",
            "waves": "海浪",
        },
        "questions": {
            "am-lighthouse-q1": {
                "question": "在美国的故事和歌曲中，灯塔象征什么？",
                "answer": "在危险中指引方向、守护平安",
                "distractors": ["孤独与流放", "捕鱼致富", "与加拿大的边界", "葬身大海", "王宫"],
            },
            "am-lighthouse-q2": {
                "question": "天空中飞着几只海鸥？",
                "answer": "三只",
                "distractors": ["一只", "两只", "四只", "五只", "六只"],
            },
        },
    },
    "qc-blue": {
        "title": "注意力检查：颜色",
        "elements": {"blue square": "蓝色方块", "white frame": "白色边框"},
        "questions": {
            "qc-blue-q1": {
                "question": "为表明您在认真阅读，请选择“蓝色”。",
                "answer": "蓝色",
                "distractors": ["红色", "绿色", "黄色", "紫色", "橙色"],
            },
        },
    },
    "qc-circles": {
        "title": "注意力检查：形状",
        "elements": {"red circles": "红色圆圈", "grey background": "灰色背景"},
        "questions": {
            "qc-circles-q1": {
                "question": "图中有几个红色圆圈？",
                "answer": "三个",
                "distractors": ["一个", "两个", "四个", "五个", "六个"],
            },
        },
    },
}

CONSENT_EN = """## What you will do

You will see about six artworks. For each you pick its culture symbols, answer short questions,
read a description and compare two descriptions.

## Your data

- Answers are stored under a pseudonymous id and used only for research.
- You may stop at any time by returning the study on Prolific; answers given so far are then deleted on request.

Questions? Write to [the research team](mailto:vivid-study@example.org).
"""

CONSENT_ZH_HANS = """## 您将要做什么

您将看到大约六件艺术作品。对每件作品，您将选出其中的文化符号、回答几个简短的问题、阅读一段描述，并比较两段描述。

## 您的数据

- 您的回答以化名编号保存，仅用于研究。
- 您可以随时在 Prolific 上退回本研究以停止参与；如您要求，已提交的回答将被删除。

如有疑问，请写信给[研究团队](mailto:vivid-study@example.org)。
"""


# Each image's text alternative (the package's "alt" and its "zh-hans" one): what the drawing shows,
# for participants who use a screen reader. Every drawing carries the "DEMO ARTWORK" band too.
ALT = {
    "cn-lotus": (
        "A simple drawing of a summer pond: pink lotus flowers among round green leaves, "
        "two mandarin ducks on the water and a dragonfly above them.",
        "一幅简单的夏日池塘图：圆形绿叶间开着粉色荷花，水面上有两只鸳鸯，上方有一只蜻蜓。",
    ),
    "cn-plum": (
        "A simple drawing of a gnarled branch with pink plum blossoms in falling snow, and a magpie perched on it.",
        "一幅简单的图：飘雪中一根虬曲的枝条开着粉色梅花，枝上停着一只喜鹊。",
    ),
    "cn-crane": (
        "A simple drawing of two red-crowned cranes standing on a rock by the waves, with a red sun rising behind them.",
        "一幅简单的图：两只丹顶鹤站在浪边的岩石上，身后一轮红日正在升起。",
    ),
    "cn-pine": (
        "A simple drawing of a pine leaning out from a mountain cliff, with bamboo, a small pavilion and clouds.",
        "一幅简单的图：一棵松树从山崖上斜伸出来，旁边有竹子、一座小亭子和云朵。",
    ),
    "am-eagle": (
        "A simple drawing of a bald eagle with spread wings over a river and a pine forest, "
        "holding an olive branch in one claw and arrows in the other.",
        "一幅简单的图：一只白头海雕展开双翅飞过河流和松林，一爪抓着橄榄枝，另一爪抓着箭。",
    ),
    "am-pumpkin": (
        "A simple drawing of a pumpkin patch in autumn: orange pumpkins, a glowing jack-o'-lantern, "
        "a scarecrow, a red barn and falling leaves.",
        "一幅简单的秋日南瓜地图：橙色的南瓜、一个发光的南瓜灯、一个稻草人、一座红色谷仓和飘落的树叶。",
    ),
    "am-bridge": (
        "A simple drawing of a red covered bridge over a stream, a dirt road leading to it and maple trees in autumn colours.",
        "一幅简单的图：一座红色廊桥横跨小溪，一条土路通向桥头，两旁是秋色的枫树。",
    ),
    "am-lighthouse": (
        "A simple drawing of a white lighthouse on coastal rocks with waves, a sailboat at sea and seagulls in the sky.",
        "一幅简单的图：海边岩石上有一座白色灯塔，海浪拍岸，海上有一艘帆船，天上有海鸥。",
    ),
    "qc-blue": (
        "A blue square inside a white frame on a light grey background.",
        "浅灰色背景上，白色边框里有一个蓝色正方形。",
    ),
    "qc-circles": (
        "Three red circles in a row on a grey background.",
        "灰色背景上横排着三个红色圆形。",
    ),
}


def _translated_artwork(artwork: dict) -> dict:
    """The artwork with the ``"zh-hans"`` objects of the package format beside its texts."""
    zh = ZH_HANS.get(artwork["id"], {})
    elements = [
        {**element, "zh-hans": {"name": zh["elements"][element["name"]]}}
        if element["name"] in zh.get("elements", {})
        else element
        for element in artwork["elements"]
    ]
    questions = [
        {**question, "zh-hans": zh["questions"][question["id"]]}
        if question["id"] in zh.get("questions", {})
        else question
        for question in artwork["questions"]
    ]
    return {
        "elements": elements,
        "questions": questions,
        "zh-hans": {**({"title": zh["title"]} if "title" in zh else {}), "alt": ALT[artwork["id"]][1]},
    }


def demo_package() -> dict:
    """The demo study.json as a dict: 8 artworks (4 American, 4 Chinese) and 2 quality checks."""
    artworks = []
    for artwork in ARTWORKS:
        artworks.append(
            {
                "id": artwork["id"],
                "title": artwork["title"],
                "alt": ALT[artwork["id"]][0],
                "artist": "VIVID Studio demo (drawn by code)",
                "date": "2025",
                "culture": artwork["culture"],
                "image": f"images/{artwork['id']}.png",
                "qc": artwork.get("qc", False),
                **_translated_artwork(artwork),
                "descriptions": artwork["descriptions"],
                **({"terms": artwork["terms"]} if artwork.get("terms") else {}),
            }
        )
    return {
        "slug": SLUG,
        "title": "Demo: artwork descriptions for two cultures",
        "groups": ["american", "chinese"],
        "artworks_per_participant": 6,
        "qc_per_participant": 2,
        "qc_threshold": QC_THRESHOLD_DEFAULT,
        "quota_per_group": 10,
        "completion_code": "DEMOCOMPLETE",
        "screenout_code": "DEMOSCREENOUT",
        "no_consent_code": "DEMONOCONSENT",
        "similarity_threshold": 0.8,
        "zh-hans": {"title": "演示：面向两种文化的艺术作品描述"},
        "estimated_minutes": 20,
        "reward": "£3.00 (demo)",
        "contact": "VIVID demo team, vivid-study@example.org",
        "ethics_reference": "DEMO-ETHICS-2025-001 (demo, not a real approval)",
        "consent": {"en": CONSENT_EN, "zh-hans": CONSENT_ZH_HANS},
        "artworks": artworks,
    }


def write_demo_package(folder: Path) -> Path:
    """study.json and images/ in ``folder``; files already holding the same bytes are left alone."""
    folder = Path(folder)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    package = demo_package()
    files = {folder / "study.json": json.dumps(package, ensure_ascii=False, indent=1).encode("utf-8") + b"\n"}
    for artwork in package["artworks"]:
        files[folder / artwork["image"]] = png(DRAWINGS[artwork["id"]], LABEL)
    for path, content in files.items():
        if not path.exists() or path.read_bytes() != content:
            path.write_bytes(content)
    return folder


def demo_study_ensure(*, folder: Path, user=None, prepare: bool = True, launch: bool = True):
    """The demo study, imported when missing, prepared in this process and launched when ready.

    Returns ``(study, notes)``: notes say what was done or what stopped the launch. Safe to
    run again: an existing study is only prepared or launched if it still needs it.
    """
    from ..models import PrepStatus, Study, StudyStatus
    from ..selectors.studies import study_launch_blockers
    from ..services import studies
    from ..services.imports import study_import

    notes = []
    write_demo_package(folder)
    study = Study.objects.filter(slug=SLUG).first()
    if study is None:
        # The preparation runs here, synchronously, instead of on a worker.
        study = study_import(source=folder, user=user, start_prepare=False)
        notes.append(f"imported {SLUG} from {folder}")
    else:
        notes.append(f"{SLUG} already exists ({study.get_status_display().lower()})")
    needs_prep = study.highlight_status != PrepStatus.READY or study.terms_status != PrepStatus.READY
    if study.status == StudyStatus.DRAFT and needs_prep and prepare:
        try:
            from ..services.prep import study_prepare
        except ImportError:
            notes.append("the preparation service is not available; prepare the study from its page")
        else:
            study = study_prepare(study=study)
            notes.append(
                f"prepared: highlights {study.highlight_status}"
                + (f" ({study.highlight_error})" if study.highlight_error else "")
                + f", terms {study.terms_status}"
                + (f" ({study.terms_error})" if study.terms_error else "")
            )
    if study.status == StudyStatus.DRAFT and launch:
        blockers = study_launch_blockers(study=study)
        if blockers:
            notes.append("not launched: " + "; ".join(blockers))
        else:
            study = studies.study_launch(study=study, user=user)
            notes.append("launched")
    return study, notes
