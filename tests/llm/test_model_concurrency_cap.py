"""A model's max_concurrency is capped: each allowed request is a lease row, made when the model is registered."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from rest_framework.test import APIClient

from llm.models import MAX_CONCURRENCY, ModelConfig, ModelSlot
from llm.services import model_add

pytestmark = pytest.mark.django_db

LOCAL = {"provider": "transformers", "model_id": "/models/tiny"}


def test_it_refuses_a_concurrency_beyond_the_cap_without_writing_anything():
    slots = ModelSlot.objects.count()
    with pytest.raises(ValidationError) as refused:
        model_add(name="wide", max_concurrency=MAX_CONCURRENCY + 1, **LOCAL)
    assert list(refused.value.message_dict) == ["max_concurrency"]
    assert not ModelConfig.objects.filter(name="wide").exists() and ModelSlot.objects.count() == slots


def test_it_makes_one_lease_row_per_request_up_to_the_cap():
    model = model_add(name="full", max_concurrency=MAX_CONCURRENCY, **LOCAL)
    assert model.slots.count() == MAX_CONCURRENCY


def test_it_answers_400_naming_the_field_to_a_huge_concurrency(researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    slots = ModelSlot.objects.count()
    body = {"name": "huge", "max_concurrency": 2**31 - 1, **LOCAL}
    response = client.post(reverse("llm-api:model_list"), body, format="json")
    assert response.status_code == 400 and list(response.json()) == ["max_concurrency"]
    assert ModelSlot.objects.count() == slots
    schema = client.get("/api/schema/", {"format": "json"}).json()
    assert schema["components"]["schemas"]["ModelCreateRequest"]["properties"]["max_concurrency"]["maximum"] == 256
