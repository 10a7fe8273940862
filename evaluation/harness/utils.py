"""lm-evaluation-harness 0.4 hooks of the VIVID tasks (exported by VIVID Studio's export_tasks).

- ``load_vivid``: the task's JSONL, found beside this file whatever the working directory
  (``datasets`` resolves a relative ``data_files`` against the working directory);
- ``VividShots``: the three demonstrations VIVID Studio drew for each item (in the row's
  ``shots``), so the conversation is the one the app sends;
- ``process_results``: VIVID's exact match, from ``vivid_answers.py`` (a verbatim copy of the
  app's rule).
"""

import runpy
from pathlib import Path

import datasets
from lm_eval.api.samplers import ContextSampler

HERE = Path(__file__).resolve().parent

# Run from its path: a harness imports this file by path, without the folder on sys.path.
score_classification = runpy.run_path(str(HERE / "vivid_answers.py"))["score_classification"]


def load_vivid(data_files=None, **_metadata):
    files = {split: str(HERE / name) for split, name in (data_files or {}).items()}
    return datasets.load_dataset("json", data_files=files)


class VividShots(ContextSampler):
    """The row's own demonstrations, in the app's order; lm-eval's random draw is not used."""

    def sample(self, n, eval_doc=None, df=None, **kwargs):
        if eval_doc is None:
            raise ValueError("VIVID demonstrations are drawn per item: set fewshot_split to the test split")
        # A one-element list: lm-eval drops the assistant turn of an empty answer ("" is a traits
        # item without any trait) but keeps a list's first element, empty or not, as the app does.
        return [{**shot, "target": [shot["target"]]} for shot in list(eval_doc["shots"])[:n]]


def process_results(doc, results):
    _prediction, correct = score_classification(doc["vivid_task"], results[0], doc["target"])
    return {"exact_match": 1.0 if correct else 0.0}
