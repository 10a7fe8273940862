"""The exact-match rule of the classification tasks (VIVID Appendix B), on the standard library alone.

The one source of truth for the rule: ``evaluation.scoring`` scores the app's runs with it, and
the lm-evaluation-harness and Inspect task folders (``evaluation/selectors/harness.py``) ship
this file's text verbatim, so a harness scores a reply exactly as the app does. Keep it free of
Django and of any other import outside the standard library: it runs where the app is not
installed.
"""

import unicodedata

# Quotes a model may wrap its answer in; Fig. 10 itself writes the empty answer as “”.
ANSWER_QUOTES = "\"'`“”‘’«»"
CLASSIFICATION_TASK_NAMES = ("topic", "traits")


def answer_strip(reply):
    """Whitespace and surrounding quotes only.

    Nothing inside the answer is forgiven: the paper's exact-match scoring "penalises any
    deviation from the gold label, including reordering or additional characters", so
    "1, 3", "3,1", "3." and "Đáp án: 3" are all wrong.
    """
    text = unicodedata.normalize("NFC", reply or "")
    previous = None
    while text != previous:
        previous = text
        text = text.strip()
        if len(text) >= 2 and text[0] in ANSWER_QUOTES and text[-1] in ANSWER_QUOTES:
            text = text[1:-1]
    return text


def normalise_topic(reply):
    """The topic prediction as compared with the gold "1".."7"."""
    return answer_strip(reply)


def normalise_traits(reply):
    """The traits prediction as compared with the gold "1,3,5" ("" means no trait)."""
    return answer_strip(reply)


def exact_match(prediction, gold):
    return prediction == gold


def score_classification(task, reply, gold):
    """(normalised prediction, correct) for a topic or traits reply."""
    if task == "topic":
        prediction = normalise_topic(reply)
    elif task == "traits":
        prediction = normalise_traits(reply)
    else:
        raise ValueError(f"unknown classification task {task!r}")
    return prediction, exact_match(prediction, gold)
