"""Files shipped into the exported lm-evaluation-harness and Inspect task folders (``export_tasks``).

They run inside the harnesses, where the app is not installed: never import them from the app.
``evaluation/selectors/harness.py`` copies them, with ``evaluation/answers.py`` as
``vivid_answers.py``, beside the exported data.
"""
