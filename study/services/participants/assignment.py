"""Assignment: which artworks a session shows, in which order, with which description and on which side."""

import random

from ...models import Assignment, Participant, Speaker, Study
from ...selectors.participants import artwork_draw_counts, study_content

# Steps of one artwork, in order. QC artworks without descriptions have only the first two.
ARTWORK_STEPS = ("symbols", "qa", "post_symbols", "post_qa", "compare")


def assignments_draw(*, participant: Participant, study: Study) -> tuple[list[Assignment], list[str]]:
    """The artworks, shown descriptions and sides of a session, and its steps; nothing is saved."""
    rng = random.Random(participant.seed)
    group = participant.group
    counts, shown_counts = artwork_draw_counts(study=study, group=group)
    # The artworks and their pairs as imported, read once per process (study_content).
    content = study_content(study)
    pairs = {
        artwork_id: (content.descriptions[base_id], content.descriptions[pragmatic_id])
        for (artwork_id, listener), (base_id, pragmatic_id) in content.pairs.items()
        if listener == group
    }
    artworks = list(content.artworks.values())
    regular = [a for a in artworks if not a.is_qc and a.pk in pairs]
    quality = [a for a in artworks if a.is_qc]

    def least_shown(items, n):
        ranked = sorted(items, key=lambda a: (counts.get(a.pk, 0), rng.random()))
        return ranked[:n]

    n_qc = min(study.qc_per_participant, len(quality))
    n_regular = min(study.artworks_per_participant - n_qc, len(regular))
    # Half familiar, half unfamiliar culture where the pool allows, least-shown first within each.
    by_culture: dict[str, list] = {}
    for artwork in regular:
        by_culture.setdefault(artwork.culture, []).append(artwork)
    cultures = sorted(by_culture)
    chosen: list = []
    if cultures:
        share = {c: n_regular // len(cultures) for c in cultures}
        for c in rng.sample(cultures, n_regular % len(cultures)):
            share[c] += 1
        for culture in cultures:
            chosen += least_shown(by_culture[culture], share[culture])
        if len(chosen) < n_regular:
            rest = [a for a in regular if a not in chosen]
            chosen += least_shown(rest, n_regular - len(chosen))
    rng.shuffle(chosen)
    qc_chosen = least_shown(quality, n_qc)
    sequence = list(chosen)
    for artwork in qc_chosen:
        # Never first: the first artwork is where participants learn the task.
        sequence.insert(rng.randint(1, len(sequence)) if sequence else 0, artwork)

    plan: list[str] = []
    assignments: list[Assignment] = []
    speakers_here = {Speaker.BASE: 0, Speaker.PRAGMATIC: 0}
    pragmatic_left_here = {True: 0, False: 0}
    for order, artwork in enumerate(sequence, start=1):
        pair = pairs.get(artwork.pk)
        assignment = Assignment(participant=participant, artwork=artwork, order=order, is_qc=artwork.is_qc)
        if pair is not None:
            # Balanced draws: the speaker this artwork showed least to the group, then the one this
            # participant saw least; the same for which side the pragmatic description takes.
            c = shown_counts.get(artwork.pk, {})
            speaker = min(
                (Speaker.BASE, Speaker.PRAGMATIC),
                key=lambda s: (c.get(s, 0), speakers_here[s], rng.random()),
            )
            speakers_here[speaker] += 1
            base, pragmatic = pair
            assignment.shown = base if speaker == Speaker.BASE else pragmatic
            left_is_pragmatic = min(
                (True, False),
                key=lambda left: (
                    c.get("pragmatic_left" if left else "pragmatic_right", 0),
                    pragmatic_left_here[left],
                    rng.random(),
                ),
            )
            pragmatic_left_here[left_is_pragmatic] += 1
            assignment.left, assignment.right = (pragmatic, base) if left_is_pragmatic else (base, pragmatic)
            steps = ARTWORK_STEPS
        else:
            steps = ARTWORK_STEPS[:2]
        assignments.append(assignment)
        plan += [f"{order}:{kind}" for kind in steps]
    return assignments, plan
