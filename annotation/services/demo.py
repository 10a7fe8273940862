"""Demo data and demo accounts for a local VIVID Studio (used by `manage.py seed_demo`).

Every function is idempotent: running it again leaves the database as it is.
"""

from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth.models import Group, User
from django.db import transaction

from core.roles import ADJUDICATOR, ANNOTATOR, RESEARCHER
from core.tables import ImportReport

from ..models import AnnotationRound, Dataset, SuggestionSet
from .imports import expression_import, suggestion_set_import
from .rounds import round_create

DEMO_CSV = Path(__file__).resolve().parent.parent / "demo" / "vivid_demo.csv"
DEMO_SUGGESTIONS_CSV = DEMO_CSV.with_name("vivid_demo_suggestions.csv")
DEMO_SUGGESTION_SET_NAME = "Demo suggestions"
# Honest about where the suggestions come from: a person wrote them, with a
# few deliberate mistakes so annotators have something to reject.
DEMO_SUGGESTION_MODEL = "demo-suggestions (hand-written, not a model)"
DEMO_SUGGESTION_PROMPT = "none (hand-written for the demo)"
DEMO_ROUND_NAME = "Demo round"
DEMO_ROUND_ANNOTATORS = ("annotator_a", "annotator_b")
DEMO_ROUND_HIDDEN_FRACTION = 0.1
DEMO_ROUND_SEED = 2026
DEMO_DATASET_NAME = "VIVID demo"
DEMO_DATASET_DESCRIPTION = (
    "Forty well-known Vietnamese idioms (thành ngữ) and proverbs (tục ngữ) with short Vietnamese explanations, "
    "labelled with the VIVID complexity traits and themes (paper section 3.2). Demonstration data only; the "
    "english_gloss column is a literal English rendering kept as metadata."
)
ADMIN_ROLE_LABEL = "Admin (superuser)"

# (username, role group or None, superuser)
DEMO_ACCOUNTS: tuple[tuple[str, str | None, bool], ...] = (
    ("annotator_a", ANNOTATOR, False),
    ("annotator_b", ANNOTATOR, False),
    ("adjudicator", ADJUDICATOR, False),
    ("researcher", RESEARCHER, False),
    ("admin", None, True),
)


@dataclass(frozen=True)
class DemoAccount:
    username: str
    role: str
    status: str  # "created", "updated" or "unchanged"


def demo_accounts_ensure(*, password: str) -> list[DemoAccount]:
    """Create the demo accounts, one per role plus a superuser, all with `password`.

    An existing account keeps its password hash when the password still
    matches; it is reset only when it no longer works, so the printed table
    stays true.
    """
    accounts = []
    with transaction.atomic():
        for username, role, superuser in DEMO_ACCOUNTS:
            user = User.objects.filter(username=username).first()
            status = "unchanged"
            if user is None:
                user = User(username=username, email=f"{username}@example.org")
                status = "created"
            changed = []
            for attribute, wanted in (("is_superuser", superuser), ("is_staff", superuser), ("is_active", True)):
                if getattr(user, attribute) != wanted:
                    setattr(user, attribute, wanted)
                    changed.append(attribute)
            if status == "created" or not user.check_password(password):
                user.set_password(password)
                changed.append("password")
            if status == "created":
                user.save()
            elif changed:
                user.save(update_fields=changed)
                status = "updated"
            if role and not user.groups.filter(name=role).exists():
                user.groups.add(Group.objects.get(name=role))
                if status == "unchanged":
                    status = "updated"
            accounts.append(DemoAccount(username=username, role=role or ADMIN_ROLE_LABEL, status=status))
    return accounts


def demo_dataset_load(
    *, path: Path = DEMO_CSV, dataset_name: str = DEMO_DATASET_NAME, user: User | None = None
) -> ImportReport:
    """Import the demo CSV through the ordinary import; rows already present are skipped.

    Raises ImportValidationError (nothing written) when the file does not import.
    """
    report = expression_import(dataset_name=dataset_name, filename=path.name, content=path.read_bytes(), user=user)
    Dataset.objects.filter(name=dataset_name, description="").update(description=DEMO_DATASET_DESCRIPTION)
    return report


@dataclass(frozen=True)
class DemoRound:
    round: AnnotationRound
    suggestion_set: SuggestionSet
    round_status: str  # "created" or "unchanged"
    suggestions_status: str


@transaction.atomic
def demo_round_ensure(*, dataset_name: str = DEMO_DATASET_NAME, user: User | None = None) -> DemoRound:
    """The demo suggestion set and an open round over every demo item, for annotator_a and annotator_b.

    Left as it is when it already exists, whatever state the demo has brought
    it to (locked, adjudicated, frozen): a second run never undoes someone's work.
    Raises ImportValidationError when the suggestions file does not import.
    """
    dataset = Dataset.objects.get(name=dataset_name)
    suggestion_set = SuggestionSet.objects.filter(dataset=dataset, name=DEMO_SUGGESTION_SET_NAME).first()
    suggestions_status = "unchanged"
    if suggestion_set is None:
        suggestion_set = suggestion_set_import(
            dataset=dataset,
            name=DEMO_SUGGESTION_SET_NAME,
            model_name=DEMO_SUGGESTION_MODEL,
            prompt_version=DEMO_SUGGESTION_PROMPT,
            filename=DEMO_SUGGESTIONS_CSV.name,
            content=DEMO_SUGGESTIONS_CSV.read_bytes(),
            user=user,
        )
        suggestions_status = "created"
    round_ = AnnotationRound.objects.filter(name=DEMO_ROUND_NAME).first()
    round_status = "unchanged"
    if round_ is None:
        annotators = [User.objects.get(username=username) for username in DEMO_ROUND_ANNOTATORS]
        round_ = round_create(
            name=DEMO_ROUND_NAME,
            dataset=dataset,
            annotators=annotators,
            user=user,
            suggestion_set=suggestion_set,
            annotators_per_item=2,
            hide_suggestions_fraction=DEMO_ROUND_HIDDEN_FRACTION,
            seed=DEMO_ROUND_SEED,
        )
        round_status = "created"
    return DemoRound(
        round=round_, suggestion_set=suggestion_set, round_status=round_status, suggestions_status=suggestions_status
    )
