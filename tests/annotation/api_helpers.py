"""What the corpus API tests share: the corpus they read and write, and ways to look at a response.

``API_CORPUS`` is the ``corpus`` fixture's file (tests/annotation/conftest.py): three labelled
expressions, the first spelled in NFC with a metadata column, so a test can send it back in NFD.
"""

import unicodedata

from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Dataset, Expression

NFC = unicodedata.normalize("NFC", "Chưa đủ lông đủ cánh")
NFD = unicodedata.normalize("NFD", NFC)
API_CORPUS = (
    "id,expression,explanation,kind,traits,theme,note\n"
    f'v1,{NFC},"Còn non nớt, chưa tự lập",idiom,"pragmatic,literal",criticism,chim non\n'
    "v2,Nước chảy đá mòn,Kiên trì thì việc khó cũng xong,proverb,,life_lessons,\n"
    "v3,Ăn quả nhớ kẻ trồng cây,Biết ơn người đi trước,proverb,folk_knowledge,virtues,\n"
)
OTHER_CORPUS = "expression,explanation,kind,traits,theme\nĂn cháo đá bát,Vô ơn bạc nghĩa,idiom,pragmatic,criticism\n"
PERSONAS = ("anonymous", "outsider", "annotator", "adjudicator", "researcher")
BOM = b"\xef\xbb\xbf"


def snapshot():
    """Everything a write could change, to prove a refused or failed request changed nothing."""
    return (
        sorted(Dataset.objects.values_list("name", "description")),
        sorted(Expression.objects.values_list("id", "dataset__name", "text", "explanation", "kind", "theme__code")),
        Expression.traits.through.objects.count(),
    )


def csv_upload(text: str, name="nhap.csv", *, bom=False) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, (BOM if bom else b"") + text.encode("utf-8"), content_type="text/csv")


def detail(response) -> str:
    if response["Content-Type"].startswith("application/json"):
        return response.json()["detail"]
    return response.content.decode()


def expression_of(dataset, external_id) -> Expression:
    return dataset.expressions.get(external_id=external_id)
