"""Issue 12, item 10: the round page says how many of the dataset's items the round holds."""

import pytest
from django.urls import reverse

from annotation.models import Dataset
from annotation.services import expression_import, round_create

pytestmark = pytest.mark.django_db


def _dataset(n: int) -> Dataset:
    rows = "".join(f"Câu số {i},Giải thích {i}.\n" for i in range(n))
    expression_import(dataset_name="Đếm", filename="dem.csv", content=("expression,explanation\n" + rows).encode())
    return Dataset.objects.get(name="Đếm")


def test_it_says_how_many_of_the_dataset_items_the_round_holds(researcher_client, annotator_a, annotator_b):
    dataset = _dataset(5)
    whole = round_create(name="Cả", dataset=dataset, annotators=[annotator_a, annotator_b])
    part = round_create(
        name="Phần",
        dataset=dataset,
        annotators=[annotator_a, annotator_b],
        expressions=dataset.expressions.filter(
            id__in=list(dataset.expressions.order_by("id").values_list("id", flat=True)[:3])
        ),
    )
    whole_page = researcher_client.get(reverse("annotation:round_detail", args=[whole.pk])).content.decode()
    part_page = researcher_client.get(reverse("annotation:round_detail", args=[part.pk])).content.decode()
    assert "All 5 items of the dataset" in whole_page
    assert "3 of 5 items of the dataset" in part_page
    assert "All 5 items" not in part_page and "All items of the dataset" not in part_page
