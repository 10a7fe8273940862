"""Issue 12, item 10: the round page says how many of the dataset's items the round holds."""

import pytest
from django.urls import reverse

from .factories import make_dataset, make_round, numbered_csv

pytestmark = pytest.mark.django_db


def test_it_says_how_many_of_the_dataset_items_the_round_holds(researcher_client, annotator_a, annotator_b):
    dataset = make_dataset(name="Đếm", csv=numbered_csv(5, explanation="Giải thích {n}."), filename="dem.csv")
    whole = make_round(dataset, [annotator_a, annotator_b], name="Cả")
    part = make_round(
        dataset,
        [annotator_a, annotator_b],
        name="Phần",
        expressions=dataset.expressions.filter(
            id__in=list(dataset.expressions.order_by("id").values_list("id", flat=True)[:3])
        ),
    )
    whole_page = researcher_client.get(reverse("annotation:round_detail", args=[whole.pk])).content.decode()
    part_page = researcher_client.get(reverse("annotation:round_detail", args=[part.pk])).content.decode()
    assert "All 5 items of the dataset" in whole_page
    assert "3 of 5 items of the dataset" in part_page
    assert "All 5 items" not in part_page and "All items of the dataset" not in part_page
