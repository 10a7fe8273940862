"""Schemathesis over the app's own /api/schema/, in process (WSGI) on the test database.

One runner for the bounded CI test (tests/site/test_api_fuzz.py) and the longer
`make fuzz` (VIVID_FUZZ_EXAMPLES=200): it counts the cases it sends and sorts
every failed check by kind, so a report can be read before and after a fix.

Beside the random cases, the cases of schemathesis' coverage phase (deterministic:
boundaries, wrong types, missing fields, each input in turn). `make fuzz` sends them
all; CI sends, per body field, the wrong type most likely to break a view that reads
request.data by hand: an object or a list where the schema says otherwise
(``{"action": {}}`` was a 500).
"""

import os
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.core.validators import ProhibitNullCharactersValidator
from django.db import close_old_connections, transaction
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core import NotSet
from schemathesis.core.failures import Failure, FailureGroup
from schemathesis.generation.drivers import CoverageGenerator
from schemathesis.generation.feedback import FeedbackSources
from schemathesis.generation.meta import CoverageScenario
from schemathesis.generation.overrides import Override
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
    positive_data_acceptance,
]
# A 400 on a schema-valid request is a defect unless every field it names is one whose
# validity the schema cannot know: a reference to a row that may not exist, a file's
# content, a pairing of fields, credentials, or the state of other rows (a name already
# taken, a dataset still referenced, a round already locked). Anything else fails the run.
DATA_DEPENDENT_FIELDS = {
    "GET /api/expressions/": {"dataset", "trait", "theme"},
    "POST /api/datasets/": {"name"},
    "DELETE /api/datasets/{id}/": {"non_field_errors"},
    "DELETE /api/expressions/{id}/": {"non_field_errors"},
    "PATCH /api/expressions/{id}/": {"text", "traits", "theme"},
    "POST /api/rounds/{id}/lock/": {"non_field_errors"},
    "GET /api/evaluation/results/{table}/": {"judge_model"},
    "POST /api/expressions/": {"dataset", "text", "traits", "theme"},
    "POST /api/imports/": {"file", "map"},
    "POST /api/suggestions/": {"dataset", "file", "name"},
    "POST /api/rounds/": {"dataset", "annotators", "suggestion_set", "name", "non_field_errors"},
    "POST /api/versions/": {"round", "name", "non_field_errors"},
    "POST /api/token/": {"non_field_errors"},
    "POST /api/study/import/": {"package"},
    # supports_vision: true is refused for the transformers provider (a pairing of fields).
    "POST /api/evaluation/models/": {"name", "base_url", "model_id", "api_key_env", "supports_vision"},
    "POST /api/evaluation/prompts/": {"name"},
    # A harness log: its content, its file name's extension against the format, and the version,
    # task and model it names (or the model of that name).
    "POST /api/evaluation/runs/import/": {"file", "model", "version", "task", "prompt"},
    "POST /api/evaluation/runs/": {"model", "prompt", "dataset", "version", "source_run", "non_field_errors"},
    "POST /api/artworks/runs/": {"collection", "speaker", "listener", "builder", "groups"},
    "POST /api/evaluation/scoring/tasks/": {"run", "raters", "n_shared", "name", "non_field_errors"},
}
# Operations whose one input is a file: every problem their 400 lists is in its content.
FILE_ONLY_OPERATIONS = {"POST /api/study/import/"}
# Few examples, no shrinking and a fixed seed keep the CI run short and repeatable.
CI_EXAMPLES = 3


# VIVID_FUZZ_ONLY="GET /api/expressions/" fuzzes the operations whose label contains it, to reproduce a finding.
def fuzz_examples() -> int:
    return int(os.environ.get("VIVID_FUZZ_EXAMPLES", CI_EXAMPLES))


# VIVID_FUZZ_COVERAGE: "all" the coverage phase's cases (the default beyond CI's examples), or
# "containers" (CI): per body field, one object or list where the schema wants something else.
def fuzz_coverage() -> str:
    return os.environ.get("VIVID_FUZZ_COVERAGE") or ("all" if fuzz_examples() > CI_EXAMPLES else "containers")


@dataclass
class FuzzReport:
    persona: str
    operations: int = 0
    cases: int = 0
    server_errors: int = 0
    by_kind: Counter = field(default_factory=Counter)
    examples: dict = field(default_factory=dict)

    def record(self, failure: Failure, label: str, detail: str) -> None:
        self.by_kind[failure.title] += 1
        self.examples.setdefault((failure.title, label), detail)

    @property
    def failures(self) -> int:
        return sum(self.by_kind.values())

    def summary(self) -> str:
        lines = [
            f"API fuzz as {self.persona}: {self.operations} operations, {self.cases} cases, "
            f"{self.server_errors} server errors (5xx), {self.failures} failed checks"
        ]
        lines += [f"  {count:5d}  {kind}" for kind, count in self.by_kind.most_common()]
        lines += [f"  - {kind} @ {label}: {detail}" for (kind, label), detail in sorted(self.examples.items())]
        return "\n".join(lines)


@dataclass
class Sender:
    headers: dict
    report: FuzzReport


@contextmanager
def in_process_requests():
    """Keep the test transaction open across WSGI requests, as Django's test client does."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield WSGIHandler()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def load_schema(app, headers: dict):
    return schemathesis.openapi.from_wsgi("/api/schema/?format=json", app, headers=headers)


def fuzz_api(*, tokens: dict[str, str], max_examples: int, app, coverage: str = "containers") -> list[FuzzReport]:
    """Every operation fuzzed as each persona of ``tokens`` (persona: API token), one report each.

    Each case is drawn once and sent as every persona in turn: drawing the cases is most of the run,
    and a derandomized draw gives every persona the same cases anyway. The personas share the test's
    transaction, so a later persona's request may find what an earlier one's created (an id that
    exists, a name already taken), as two people using the app at once would."""
    senders = [
        Sender(headers={"Authorization": f"Token {token}"}, report=FuzzReport(persona=persona))
        for persona, token in tokens.items()
    ]
    schema = load_schema(app, senders[0].headers)
    only = os.environ.get("VIVID_FUZZ_ONLY", "")
    for result in schema.get_all_operations():
        operation = result.ok()
        if only and only not in operation.label:
            continue
        for sender in senders:
            sender.report.operations += 1
        for case in coverage_cases(operation, coverage):
            _send(case, operation, senders=senders)
        _fuzz_operation(operation, GenerationMode.POSITIVE, senders=senders, max_examples=max_examples)
        if _has_negative_cases(operation):
            _fuzz_operation(operation, GenerationMode.NEGATIVE, senders=senders, max_examples=max_examples)
    return [sender.report for sender in senders]


def coverage_cases(operation, coverage: str) -> list:
    """The coverage phase's cases of ``operation``: all of them, or one container per body field."""
    modes = list(GenerationMode) if coverage == "all" else [GenerationMode.NEGATIVE]
    generator = CoverageGenerator(
        operation=operation,
        generation_modes=modes,
        generation_config=operation.schema.config.generation_for(operation=operation, phase="coverage"),
        auth_storage=None,
        override=Override(),
        feedback=FeedbackSources(),
    )
    if coverage == "all":
        return list(generator)
    chosen: dict[str, object] = {}
    for case in generator:
        data = case.meta.phase.data
        if data.scenario != CoverageScenario.INCORRECT_TYPE or data.parameter_location is None:
            continue
        if data.parameter_location.value != "body":
            continue
        value = _at(case.body, data.location)
        # An object rather than a list where both are wrong: {} is unhashable and has no .strip().
        if isinstance(value, dict) or (isinstance(value, list) and data.location not in chosen):
            chosen[data.location] = case
    return list(chosen.values())


def _at(body, location: str | None):
    """The value a coverage case's schema location ("/properties/a/items/type") puts wrong in ``body``."""
    parts = (location or "").strip("/").split("/")
    value = body
    for kind, name in zip(parts[::2], parts[1::2], strict=False):
        if kind == "properties" and isinstance(value, dict):
            value = value.get(name)
        elif kind == "items" and isinstance(value, list) and value:
            value = value[0]
        else:
            return None
    return value


def _has_negative_cases(operation) -> bool:
    """Whether any input can be made schema-invalid: a body, or a parameter constrained beyond "a string"."""
    # Hypothesis needs about a second of rejected draws to find out otherwise (Unsatisfiable):
    # half the CI run went there, on list and {code} operations that take nothing else.
    params = [*operation.path_parameters, *operation.query, *operation.headers, *operation.cookies]
    return bool(operation.body) or not all(_free_string(param.definition.get("schema", {})) for param in params)


def _free_string(schema: dict) -> bool:
    return schema.get("type") == "string" and set(schema) <= {"type", "description"}


def _fuzz_operation(operation, mode, *, senders, max_examples) -> None:
    @settings(
        max_examples=max_examples,
        derandomize=True,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case):
        _send(case, operation, senders=senders)

    try:
        run()
    except Unsatisfiable:
        # An operation with nothing to break (no parameters, no body) has no negative cases.
        if mode is not GenerationMode.NEGATIVE:
            raise


def _send(case, operation, *, senders) -> None:
    for sender in senders:
        _send_as(case, operation, headers=sender.headers, report=sender.report)


def _send_as(case, operation, *, headers, report) -> None:
    # A failed request must not leave the transaction aborted for the cases after it (PostgreSQL).
    savepoint = transaction.savepoint()
    response = case.call(headers=headers)
    # The case was drawn once for every persona: this request went out as this one.
    assert response.request.headers["Authorization"] == headers["Authorization"], case.formatted_path
    if response.status_code >= 500:
        transaction.savepoint_rollback(savepoint)
        report.server_errors += 1
    else:
        transaction.savepoint_commit(savepoint)
    report.cases += 1
    try:
        case.validate_response(response, checks=CHECKS, headers=headers)
    except FailureGroup as group:
        for failure in group.exceptions:
            if _data_dependent_rejection(failure, operation.label, response):
                continue
            sent = f" query {case.query!r}" if case.query else ""
            sent += f" headers {case.headers!r}" if case.headers else ""
            sent += f" sent {str(case.body)[:200]!r}" if not isinstance(case.body, NotSet) else ""
            detail = (
                f"{case.method} {case.formatted_path}{sent} -> {response.status_code}: {failure.message[:200]!r} "
                f"body {response.text[:300]!r}"
            )
            report.record(failure, operation.label, detail)


def _error_fields(body) -> set[str]:
    if not isinstance(body, dict):
        return {"?"}
    if "ok" in body and "errors" in body:
        return {"file"}  # an import report: the rows of the file are at fault
    if set(body) == {"errors"}:
        return {str(error).split(":", 1)[0] for error in body["errors"]}
    return set(body)


def _data_dependent_rejection(failure: Failure, label: str, response) -> bool:
    if failure.title != "Schema-valid request rejected" or response.status_code != 400:
        return False
    try:
        body = response.json()
    except ValueError:
        return False
    if label in FILE_ONLY_OPERATIONS and "errors" in body:
        return True
    if _only_nul_refused(body):
        return True  # NUL is valid JSON Schema text, but refused on purpose (PostgreSQL cannot store it)
    return _error_fields(body) <= DATA_DEPENDENT_FIELDS.get(label, set())


def _only_nul_refused(body) -> bool:
    messages = (
        [m for ms in body.values() for m in (ms if isinstance(ms, list) else [ms])] if isinstance(body, dict) else []
    )
    return bool(messages) and all(m == str(ProhibitNullCharactersValidator.message) for m in messages)
