"""Judge bias diagnostics: paraphrased judge prompts, pairwise judging with both orders.

A pairwise run asks each idiom twice (its two explanations in both orders), so an item is unique
per run, expression and order. The built-in paraphrases and the pairwise prompt are a frozen copy
of evaluation/prompts.py BIAS_PROMPTS as of this migration (see 0002 for why a copy).
"""

import hashlib
import json

import django.db.models.deletion
from django.db import migrations, models

PROMPTS = [
    {
        "name": "zero-shot (paraphrase 1)",
        "kind": "judge",
        "reference": "ours, a paraphrase of the zero-shot judge prompt",
        "ours": True,
        "paraphrase_of": "zero-shot",
        "messages": [
            {
                "role": "user",
                "content": (
                    "Với vai trò một chuyên gia tiếng Việt, hãy đánh giá giải thích của LLM cho câu thành ngữ/tục ngữ sau khớp với giải thích gốc do con người viết đến mức nào. Cho điểm từ 0 (sai lệch hoàn toàn về ý nghĩa) đến 5 (hoàn toàn tương đồng và chính xác về ý nghĩa).\n"
                    "\n"
                    "Thành ngữ/Tục ngữ: {phrase}\n"
                    "Giải thích gốc: {explanation}\n"
                    "Giải thích của LLM: {response}\n"
                    "\n"
                    "Chỉ ghi một số nguyên duy nhất từ 0 đến 5, không kèm lời giải thích hay ký tự nào khác."
                ),
            },
        ],
    },
    {
        "name": "zero-shot (paraphrase 2)",
        "kind": "judge",
        "reference": "ours, a paraphrase of the zero-shot judge prompt",
        "ours": True,
        "paraphrase_of": "zero-shot",
        "messages": [
            {
                "role": "user",
                "content": (
                    "So sánh giải thích của LLM với giải thích gốc của con người cho câu thành ngữ/tục ngữ dưới đây: giải thích của LLM diễn đạt đúng ý nghĩa đến mức nào? Chấm trên thang từ 0 đến 5, trong đó 5 là hoàn toàn tương đồng và chính xác, 0 là sai lệch hoàn toàn.\n"
                    "\n"
                    "Câu thành ngữ/tục ngữ: {phrase}\n"
                    "Giải thích của con người: {explanation}\n"
                    "Giải thích cần chấm: {response}\n"
                    "\n"
                    "Trả lời bằng đúng một số nguyên từ 0 đến 5 và không viết gì thêm."
                ),
            },
        ],
    },
    {
        "name": "zero-shot (paraphrase 3)",
        "kind": "judge",
        "reference": "ours, a paraphrase of the zero-shot judge prompt",
        "ours": True,
        "paraphrase_of": "zero-shot",
        "messages": [
            {
                "role": "user",
                "content": (
                    "Bạn đang chấm bài giải nghĩa thành ngữ, tục ngữ tiếng Việt. Dựa vào nghĩa gốc do con người viết, hãy cho điểm giải thích của LLM từ 0 đến 5: 5 nghĩa là giải thích hoàn toàn đúng và tương đồng với nghĩa gốc, 0 nghĩa là hiểu sai hoàn toàn.\n"
                    "\n"
                    "Câu: {phrase}\n"
                    "Nghĩa gốc (do con người viết): {explanation}\n"
                    "Giải thích do LLM viết: {response}\n"
                    "\n"
                    "Kết quả chỉ gồm một con số từ 0 đến 5, không giải thích."
                ),
            },
        ],
    },
    {
        "name": "demonstration (paraphrase 1)",
        "kind": "judge",
        "reference": "ours, a paraphrase of the demonstration judge prompt",
        "ours": True,
        "paraphrase_of": "demonstration",
        "messages": [
            {
                "role": "user",
                "content": (
                    "Với vai trò một chuyên gia tiếng Việt, bạn chấm điểm giải thích của LLM cho một câu thành ngữ/tục ngữ, so với giải thích gốc do con người viết, từ 0 (sai lệch hoàn toàn) đến 5 (hoàn toàn tương đồng và chính xác về ý nghĩa). Các ví dụ đã chấm sau đây gồm cả giải thích tốt lẫn giải thích kém:\n"
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
                    "Hãy chấm trường hợp dưới đây theo cùng cách:\n"
                    "Thành ngữ/Tục ngữ: {phrase}\n"
                    "Giải thích gốc: {explanation}\n"
                    "Giải thích của LLM: {response}\n"
                    "\n"
                    "Chỉ ghi một số nguyên duy nhất từ 0 đến 5, không kèm lời giải thích hay ký tự nào khác."
                ),
            },
        ],
    },
    {
        "name": "demonstration (paraphrase 2)",
        "kind": "judge",
        "reference": "ours, a paraphrase of the demonstration judge prompt",
        "ours": True,
        "paraphrase_of": "demonstration",
        "messages": [
            {
                "role": "user",
                "content": (
                    "Nhiệm vụ: so sánh giải thích của LLM với giải thích gốc của con người cho một câu thành ngữ/tục ngữ và cho điểm trên thang điểm từ 0 đến 5 (5: hoàn toàn tương đồng và chính xác về ý nghĩa, 0: sai lệch hoàn toàn). Tham khảo các ví dụ đã được chấm dưới đây:\n"
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
                    "Trường hợp cần chấm:\n"
                    "Thành ngữ/Tục ngữ: {phrase}\n"
                    "Giải thích gốc: {explanation}\n"
                    "Giải thích của LLM: {response}\n"
                    "\n"
                    "Trả lời bằng đúng một số nguyên từ 0 đến 5 và không viết gì thêm."
                ),
            },
        ],
    },
    {
        "name": "demonstration (paraphrase 3)",
        "kind": "judge",
        "reference": "ours, a paraphrase of the demonstration judge prompt",
        "ours": True,
        "paraphrase_of": "demonstration",
        "messages": [
            {
                "role": "user",
                "content": (
                    "Bạn đang chấm bài giải nghĩa thành ngữ, tục ngữ tiếng Việt theo thang điểm 0-5 (5: đúng và tương đồng hoàn toàn với giải thích gốc, 0: hiểu sai hoàn toàn). Sau đây là vài bài đã chấm, có bài tốt và bài kém, để bạn hiệu chỉnh cách cho điểm:\n"
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
                    "Bây giờ đến lượt bài này:\n"
                    "Thành ngữ/Tục ngữ: {phrase}\n"
                    "Giải thích gốc: {explanation}\n"
                    "Giải thích của LLM: {response}\n"
                    "\n"
                    "Kết quả chỉ gồm một con số từ 0 đến 5, không giải thích."
                ),
            },
        ],
    },
    {
        "name": "cot (paraphrase 1)",
        "kind": "judge",
        "reference": "ours, a paraphrase of the cot judge prompt",
        "ours": True,
        "paraphrase_of": "cot",
        "messages": [
            {
                "role": "user",
                "content": (
                    "Với vai trò một chuyên gia tiếng Việt, hãy đánh giá giải thích của LLM cho câu thành ngữ/tục ngữ dưới đây so với giải thích gốc của con người, trên thang điểm từ 0 đến 5 (5: hoàn toàn tương đồng và chính xác về ý nghĩa, 0: sai lệch hoàn toàn).\n"
                    "\n"
                    "Thành ngữ/Tục ngữ: {phrase}\n"
                    "Giải thích gốc: {explanation}\n"
                    "Giải thích của LLM: {response}\n"
                    "\n"
                    "Trước khi cho điểm, hãy lập luận theo các bước:\n"
                    "1. Nêu ý nghĩa chính của câu theo giải thích gốc.\n"
                    "2. Đối chiếu với ý nghĩa giải thích của LLM nêu ra: đúng, đúng một phần hay sai.\n"
                    "3. Xét xem giải thích của LLM có thiếu, thừa hay sai ý nào, có giữ được sắc thái và cách hiểu của người Việt không.\n"
                    "4. Chọn mức điểm phù hợp.\n"
                    "Dòng cuối cùng chỉ ghi điểm theo dạng “Điểm: N”, với N là số nguyên từ 0 đến 5."
                ),
            },
        ],
    },
    {
        "name": "cot (paraphrase 2)",
        "kind": "judge",
        "reference": "ours, a paraphrase of the cot judge prompt",
        "ours": True,
        "paraphrase_of": "cot",
        "messages": [
            {
                "role": "user",
                "content": (
                    "Hãy chấm giải thích của LLM cho câu thành ngữ/tục ngữ sau, lấy giải thích gốc (con người) làm chuẩn, trên thang từ 0 (sai lệch hoàn toàn) đến 5 (hoàn toàn tương đồng và chính xác).\n"
                    "\n"
                    "Câu thành ngữ/tục ngữ: {phrase}\n"
                    "Giải thích của con người: {explanation}\n"
                    "Giải thích cần chấm: {response}\n"
                    "\n"
                    "Suy nghĩ từng bước: trước hết xác định nghĩa cốt lõi trong giải thích gốc; sau đó so với nghĩa trong giải thích cần chấm; tiếp theo kiểm tra những ý bị bỏ sót, thêm sai và sắc thái; cuối cùng quyết định điểm.\n"
                    "Kết thúc bằng một dòng duy nhất dạng “Điểm: N” (N là số nguyên từ 0 đến 5)."
                ),
            },
        ],
    },
    {
        "name": "cot (paraphrase 3)",
        "kind": "judge",
        "reference": "ours, a paraphrase of the cot judge prompt",
        "ours": True,
        "paraphrase_of": "cot",
        "messages": [
            {
                "role": "user",
                "content": (
                    "Bạn đang chấm bài giải nghĩa thành ngữ, tục ngữ tiếng Việt. Nghĩa gốc do con người viết là đáp án chuẩn; điểm từ 0 (hiểu sai hoàn toàn) đến 5 (đúng và tương đồng hoàn toàn).\n"
                    "\n"
                    "Câu: {phrase}\n"
                    "Nghĩa gốc (do con người viết): {explanation}\n"
                    "Giải thích do LLM viết: {response}\n"
                    "\n"
                    "Hãy phân tích lần lượt:\n"
                    "- Nghĩa cốt lõi của câu là gì?\n"
                    "- Giải thích do LLM viết nắm đúng, đúng một phần hay sai nghĩa đó?\n"
                    "- Có ý nào bị thiếu, bị thêm sai, hay sắc thái nào bị mất không?\n"
                    "Sau khi phân tích, ghi điểm ở dòng cuối theo dạng “Điểm: N”, N là số nguyên từ 0 đến 5."
                ),
            },
        ],
    },
    {
        "name": "aspect (paraphrase 1)",
        "kind": "judge",
        "reference": "ours, a paraphrase of the aspect judge prompt",
        "ours": True,
        "paraphrase_of": "aspect",
        "messages": [
            {
                "role": "user",
                "content": (
                    "[Hướng dẫn]\n"
                    "Với vai trò một chuyên gia tiếng Việt, hãy so sánh giải thích của LLM với giải thích gốc do con người viết cho một câu thành ngữ/tục ngữ, theo năm tiêu chí dưới đây:\n"
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
                    "Độ tương đồng tổng thể: cân nhắc kỹ rồi chỉ ghi điểm độ tương đồng tổng thể, không thêm lời giải thích nào"
                ),
            },
        ],
    },
    {
        "name": "aspect (paraphrase 2)",
        "kind": "judge",
        "reference": "ours, a paraphrase of the aspect judge prompt",
        "ours": True,
        "paraphrase_of": "aspect",
        "messages": [
            {
                "role": "user",
                "content": (
                    "[Hướng dẫn]\n"
                    "Nhiệm vụ: chấm mức độ giải thích của LLM cho một câu thành ngữ/tục ngữ giống với giải thích gốc của con người. Hãy dùng các tiêu chí sau:\n"
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
                    "Độ tương đồng tổng thể: sau khi suy nghĩ, chỉ trả lời bằng điểm độ tương đồng tổng thể, không viết gì khác"
                ),
            },
        ],
    },
    {
        "name": "aspect (paraphrase 3)",
        "kind": "judge",
        "reference": "ours, a paraphrase of the aspect judge prompt",
        "ours": True,
        "paraphrase_of": "aspect",
        "messages": [
            {
                "role": "user",
                "content": (
                    "[Hướng dẫn]\n"
                    "Bạn đang chấm bài giải nghĩa thành ngữ, tục ngữ tiếng Việt: giải thích gốc của con người là chuẩn, giải thích của LLM là bài cần chấm. Các tiêu chí:\n"
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
                    "Độ tương đồng tổng thể: hãy cân nhắc, rồi chỉ đưa ra điểm độ tương đồng tổng thể và không giải thích"
                ),
            },
        ],
    },
    {
        "name": "pairwise",
        "kind": "judge",
        "reference": "ours, pairwise judging after VIVID §4.1",
        "ours": True,
        "paraphrase_of": "",
        "messages": [
            {
                "role": "user",
                "content": (
                    "Bạn là chuyên gia ngôn ngữ. Dưới đây là một câu thành ngữ/tục ngữ, giải thích gốc của con người và hai giải thích do LLM viết. Giải thích nào đúng và sát với ý nghĩa của câu hơn, lấy giải thích gốc làm chuẩn?\n"
                    "\n"
                    "Thành ngữ/Tục ngữ: {phrase}\n"
                    "Giải thích gốc: {explanation}\n"
                    "\n"
                    "Giải thích 1: {first}\n"
                    "\n"
                    "Giải thích 2: {second}\n"
                    "\n"
                    "Chỉ trả lời duy nhất một số: 1 nếu giải thích 1 tốt hơn, 2 nếu giải thích 2 tốt hơn. Không giải thích, không thêm ký tự nào khác."
                ),
            },
        ],
    },
]


def _hash(messages):
    canonical = json.dumps(messages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def create_builtins(apps, schema_editor):
    PromptTemplate = apps.get_model("evaluation", "PromptTemplate")
    for prompt in PROMPTS:
        PromptTemplate.objects.update_or_create(
            content_hash=_hash(prompt["messages"]),
            defaults={**prompt, "builtin": True},
        )


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0009_artwork_models_to_artworks_app"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="runitem", name="run_item_unique_expression"),
        migrations.AddField(
            model_name="prompttemplate", name="paraphrase_of", field=models.CharField(blank=True, max_length=20)
        ),
        migrations.AddField(
            model_name="run",
            name="source_run_b",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="pairwise_runs_b",
                to="evaluation.run",
            ),
        ),
        migrations.AddField(
            model_name="runitem",
            name="source_item_b",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="evaluation.runitem",
            ),
        ),
        migrations.AddField(model_name="runitem", name="swapped", field=models.BooleanField(default=False)),
        migrations.AddConstraint(
            model_name="runitem",
            constraint=models.UniqueConstraint(
                fields=("run", "expression", "swapped"), name="run_item_unique_expression_order"
            ),
        ),
        # Reversing keeps the rows: runs may already point at them (PROTECT).
        migrations.RunPython(create_builtins, migrations.RunPython.noop),
    ]
