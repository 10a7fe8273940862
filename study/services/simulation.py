"""Test responses: synthetic participants through the real pages, marked as test data."""

import random

from ..models import Question, Study, StudyStatus
from ..simulate import AnswerKey, DjangoClientTransport, Outcome, SyntheticParticipant, entry_url
from .participants import test_token


class SimulationError(ValueError):
    pass


def answer_key(*, study: Study) -> AnswerKey:
    rows = Question.objects.filter(artwork__study=study).values_list("pk", "answer", "artwork__is_qc")
    return AnswerKey(answers={pk: (answer, is_qc) for pk, answer, is_qc in rows})


def test_responses_generate(
    *, study: Study, n: int, seed: int | None = None, qc_fail_rate: float = 0.0, transport_factory=None, progress=None
) -> list[Outcome]:
    """Send ``n`` synthetic participants through the study, alternating groups.

    Each is a fresh browser (its own cookie session) that enters with a signed test token,
    so its rows carry ``is_test`` and never count towards quotas or default results.
    """
    if n < 1:
        raise SimulationError("--n must be at least 1.")
    if not 0 <= qc_fail_rate <= 1:
        raise SimulationError("--qc-fail-rate must be between 0 and 1.")
    if study.status == StudyStatus.CLOSED:
        raise SimulationError(f"Study {study.slug} is closed.")
    rng = random.Random(seed)
    key = answer_key(study=study)
    token = test_token(study.slug)
    make_transport = transport_factory or DjangoClientTransport
    run_tag = f"{rng.getrandbits(32):08x}"
    outcomes = []
    fails = set(rng.sample(range(n), round(n * qc_fail_rate)))
    for index in range(n):
        group = study.groups[index % len(study.groups)]
        pid = f"TEST-{run_tag}-{index + 1:04d}"
        participant = SyntheticParticipant(
            make_transport(), key=key, rng=random.Random(rng.getrandbits(64)), fail_qc=index in fails
        )
        outcomes.append(participant.run(entry_url("", study.slug, pid=pid, group=group, test_token=token), pid))
        if progress:
            progress(1)
    return outcomes
