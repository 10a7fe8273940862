"""The annotation tests' shared data and clients.

One ``dataset`` (the labelled Ca dao corpus of tests/annotation/factories.py) for every module;
a module that needs other content builds it with the factories under a fixture of its own name.
"""

import pytest

from .api_helpers import API_CORPUS, OTHER_CORPUS
from .factories import CA_DAO_HEADER, CA_DAO_ROWS, api_client_for, make_dataset

# The API personas, by the fixture (tests/conftest.py) that makes each one.
API_PERSONAS = {
    "annotator": "annotator_a",
    "annotator_b": "annotator_b",
    "adjudicator": "adjudicator",
    "researcher": "researcher",
    "outsider": "outsider",
}


@pytest.fixture
def dataset(db):
    """Six labelled expressions (kinds, traits, themes) in the dataset "Ca dao"."""
    return make_dataset()


@pytest.fixture
def small_dataset(db):
    """The first four expressions of ``dataset`` only, under the same name."""
    return make_dataset(csv=CA_DAO_HEADER + "\n" + "".join(f"{row}\n" for row in CA_DAO_ROWS[:4]))


@pytest.fixture
def api_as(request):
    """``api_as("researcher")``: an API client signed in as that persona (``"anonymous"``: nobody)."""

    def client_for(persona: str):
        if persona == "anonymous":
            return api_client_for()
        return api_client_for(request.getfixturevalue(API_PERSONAS[persona]))

    return client_for


@pytest.fixture
def api(api_as):
    """The researcher's API client."""
    return api_as("researcher")


@pytest.fixture
def corpus(db):
    """The corpus API tests' "Ca dao": three labelled expressions v1-v3, v1 with a ``note`` (api_helpers)."""
    return make_dataset(csv=API_CORPUS, filename="seed.csv")


@pytest.fixture
def other_corpus(db):
    """A second dataset, "Khác", of one expression."""
    return make_dataset(name="Khác", csv=OTHER_CORPUS, filename="other.csv")
