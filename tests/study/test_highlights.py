"""Similar-sentence matching with the real bundled all-MiniLM-L6-v2 (loaded once for the session)."""

import os
import subprocess
import sys
import textwrap

import pytest

from study.highlights import BUNDLED_NAME, embedding_model, embedding_model_name, sentence_matches
from tests.conftest import ROOT


@pytest.fixture(scope="session")
def model():
    return embedding_model()


BASE = [
    "The painting shows a crane standing under a pine tree.",
    "Stock markets fell sharply on Monday morning.",
    "It was painted with ink on silk in the Ming dynasty.",
]
PRAGMATIC = [
    "A crane stands beneath a pine tree in this painting.",
    "The artist used ink on silk during the Ming dynasty.",
    "Bananas are rich in potassium.",
]


def test_it_matches_near_paraphrases_and_leaves_unrelated_sentences_alone(model):
    matches = sentence_matches(BASE, PRAGMATIC, 0.8)

    assert [(i, j) for i, j, _ in matches] == [(0, 0), (2, 1)]
    assert all(cosine >= 0.8 for _, _, cosine in matches)
    unrelated = sentence_matches(
        ["Stock markets fell sharply on Monday morning."], ["Bananas are rich in potassium."], 0.8
    )
    assert unrelated == []


def test_it_keeps_only_each_sentences_best_match(model):
    # Both base sentences are close to the one pragmatic sentence; only the closer one is paired.
    base = ["A crane stands beneath a pine tree in this painting.", "A crane and a pine tree appear in the picture."]
    pragmatic = ["A crane stands beneath a pine tree in this painting.", "Bananas are rich in potassium."]

    matches = sentence_matches(base, pragmatic, 0.0)

    assert [(i, j) for i, j, _ in matches] == [(0, 0)]
    assert matches[0][2] == pytest.approx(1.0, abs=1e-3)
    everything = sentence_matches(BASE, PRAGMATIC, -1.0)
    firsts = [i for i, _, _ in everything]
    seconds = [j for _, j, _ in everything]
    assert len(set(firsts)) == len(firsts) and len(set(seconds)) == len(seconds)
    assert firsts == sorted(firsts)


def test_it_honours_the_threshold_and_rounds_the_cosine(model):
    loose = sentence_matches(BASE, PRAGMATIC, 0.5)
    cosines = sorted(cosine for _, _, cosine in loose)
    assert cosines and all(round(c, 4) == c for c in cosines)
    # Just above the lowest kept cosine, that pair drops out and the others stay.
    stricter = sentence_matches(BASE, PRAGMATIC, cosines[0] + 0.0001)
    assert len(stricter) == len(loose) - 1
    assert sentence_matches(BASE, PRAGMATIC, 0.9999) == []


def test_it_answers_nothing_for_an_empty_description(model):
    assert sentence_matches([], PRAGMATIC, 0.8) == []
    assert sentence_matches(BASE, [], 0.8) == []


def test_it_loads_the_bundled_model_once(model, settings):
    settings.STUDY_EMBEDDING_MODEL = ""
    assert embedding_model_name() == BUNDLED_NAME
    assert embedding_model() is model
    assert model.get_embedding_dimension() == 384  # all-MiniLM-L6-v2


def test_it_never_opens_a_network_connection_to_load_the_model():
    # A fresh process whose sockets refuse to connect anywhere but loopback: loading and
    # encoding must succeed, so nothing was fetched from a model hub.
    script = textwrap.dedent(
        """
        import socket
        connect = socket.socket.connect
        def guarded(self, address):
            if isinstance(address, tuple) and address[0] not in ("127.0.0.1", "::1", "localhost"):
                raise RuntimeError(f"network connection to {address}")
            return connect(self, address)
        socket.socket.connect = guarded
        import django
        django.setup()
        from study.highlights import sentence_matches
        print(sentence_matches(["A crane under a pine."], ["A crane beneath a pine tree."], 0.5))
        """
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "vivid_site.settings", "DJANGO_ENV": "test"}
    env.pop("HF_HUB_OFFLINE", None)
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().startswith("[[0, 0, 0.")
