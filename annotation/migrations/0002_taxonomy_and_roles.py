"""Seed the fixed VIVID taxonomy and the staff role groups.

Numbers follow the order of the paper's classification prompts: traits as in
Appendix B.2 (Fig. 10), themes as in Appendix B.1 (Fig. 9). The Vietnamese
names are those prompts' wording; the English descriptions follow section 3.2.
"""

from django.db import migrations

TRAITS = [
    (
        1, "literal", "Meaning",
        "Literal expression", "Không mang nghĩa bóng",
        "Purely descriptive, without a metaphorical layer; models tend to invent a figurative meaning "
        "(e.g. \u201cDa \u0111\u1ed3ng l\u00f4ng m\u00f3c\u201d describes a good buffalo's hide).",
        "Câu tục ngữ không mang nghĩa bóng, chỉ mang nghĩa đen hoặc nghĩa kỹ thuật "
        "(ví dụ: \u201cDa đồng lông móc\u201d là kinh nghiệm chọn trâu, không hàm ý sâu xa).",
    ),
    (
        2, "sino_vietnamese", "Lexical",
        "Sino-Vietnamese terms", "Có từ Hán Việt",
        "Contains rare or literary Sino-Vietnamese vocabulary seldom met in contemporary usage "
        "(e.g. \u201cÁc khuất non đoài\u201d).",
        "Có từ Hán Việt hiếm gặp hoặc mang tính văn chương, ít xuất hiện trong cách dùng hiện nay "
        "(ví dụ: \u201cNhất tự vi sư, bán tự vi sư\u201d).",
    ),
    (
        3, "uncommon_vocabulary", "Lexical",
        "Uncommon vocabulary", "Có từ ít phổ biến",
        "Contains archaic or obsolete words no longer common in modern Vietnamese "
        "(e.g. \u201cAm thanh cảnh vắng\u201d, where \u201cam\u201d is a small rural temple).",
        "Có từ cổ hoặc ít dùng trong tiếng Việt hiện đại "
        "(ví dụ: \u201cAm thanh cảnh vắng\u201d, \u201cam\u201d nghĩa là chùa nhỏ).",
    ),
    (
        4, "folk_knowledge", "Agricultural and customary knowledge",
        "Folk knowledge", "Kinh nghiệm dân gian",
        "Reflects agricultural practice, seasonal cycles or customary wisdom of traditional Vietnamese life "
        "(e.g. \u201cCấy tháng Chạp đạp không đổ\u201d).",
        "Thể hiện kinh nghiệm dân gian xưa của người Việt về nông nghiệp, thời tiết, mùa vụ hay phong tục "
        "(ví dụ: \u201cCấy thưa thừa thóc, cấy mau dốc bồ\u201d).",
    ),
    (
        5, "pragmatic", "Meaning",
        "Pragmatic nuance", "Sắc thái mỉa mai, châm biếm",
        "Carries sarcasm, irony or an evaluative connotation that a neutral reading misses "
        "(e.g. \u201cTốt mẽ khoe màu\u201d mocks superficiality).",
        "Mang sắc thái mỉa mai, châm biếm hoặc tiêu cực mà cách hiểu trung tính bỏ qua "
        "(ví dụ: \u201cTốt mẽ khoe màu\u201d chê thói khoe mẽ bề ngoài).",
    ),
]

THEMES = [
    (
        1, "love", "Love", "Tình yêu đôi lứa và hôn nhân",
        "Romantic relationships, emotional bonds, marriage and matters of the heart.",
        "Tình yêu đôi lứa, hôn nhân và những gắn bó tình cảm.",
    ),
    (
        2, "virtues", "Virtues", "Ca ngợi phẩm chất và đạo đức con người",
        "Moral standards, ethical values and ideal personal qualities.",
        "Ca ngợi phẩm chất, đạo đức và những chuẩn mực tốt đẹp của con người.",
    ),
    (
        3, "criticism", "Criticism", "Phê phán và châm biếm thói xấu",
        "Disapproval, mockery or critical judgement of behaviours, traits or situations.",
        "Phê phán và châm biếm các thói quen xấu, hành vi tiêu cực.",
    ),
    (
        4, "work_nature", "Work and nature", "Sản xuất, lao động và thiên nhiên",
        "Labour, agricultural practice, natural phenomena and traditional livelihoods.",
        "Kinh nghiệm sống về sản xuất, lao động và thiên nhiên.",
    ),
    (
        5, "social_relationships", "Social relationships", "Quan hệ xã hội, gia đình",
        "Interpersonal dynamics: family ties, friendship, neighbours and community.",
        "Các mối quan hệ xã hội, gia đình, bạn bè, làng xóm.",
    ),
    (
        6, "life_lessons", "Life lessons", "Triết lý và bài học cuộc sống",
        "Philosophical reflection, moral guidance or practical wisdom about life.",
        "Triết lý và bài học về cách sống.",
    ),
    (
        7, "other", "Other", "Chủ đề khác",
        "Miscellaneous topics: abstract concepts, specific scenarios or descriptions.",
        "Các chủ đề khác, không phù hợp với các mục trên.",
    ),
]

ROLES = ["Annotator", "Adjudicator", "Researcher"]


def seed(apps, schema_editor):
    Trait = apps.get_model("annotation", "Trait")
    Theme = apps.get_model("annotation", "Theme")
    Group = apps.get_model("auth", "Group")
    for number, code, aspect, name_en, name_vi, desc_en, desc_vi in TRAITS:
        Trait.objects.update_or_create(
            code=code,
            defaults=dict(
                number=number, aspect=aspect, name_en=name_en, name_vi=name_vi,
                description_en=desc_en, description_vi=desc_vi,
            ),
        )
    for number, code, name_en, name_vi, desc_en, desc_vi in THEMES:
        Theme.objects.update_or_create(
            code=code,
            defaults=dict(number=number, name_en=name_en, name_vi=name_vi, description_en=desc_en, description_vi=desc_vi),
        )
    for name in ROLES:
        Group.objects.get_or_create(name=name)


def unseed(apps, schema_editor):
    apps.get_model("annotation", "Trait").objects.all().delete()
    apps.get_model("annotation", "Theme").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(seed, unseed)]
