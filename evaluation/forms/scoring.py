"""Forms of the human scoring pages (VIVID §4.1.1). They check input only; evaluation.services.scoring decides."""

from django import forms
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from core.forms import IdempotentFormMixin, InputTagRenderer

from ..models import HumanRating, Run
from ..selectors.scoring import rater_choices, scoring_runs
from ..services.scoring import scoring_task_size_check

SCORE_CHOICES = [(value, str(value)) for value in range(6)]
# A dimension (not the overall score) may be left unscored only by saying so: stored as no score.
CANNOT_JUDGE = "na"
DIMENSION_CHOICES = [*SCORE_CHOICES, (CANNOT_JUDGE, _("cannot judge"))]
NOTE_MAX_LENGTH = 4000

# The dimensions the paper names (§4.1.1), then the overall score. The rubric adapts the
# aspect-based judge prompt (Fig. 7) for people: short, Vietnamese first, English after.
DIMENSIONS = (
    {
        "field": "accuracy",
        "label": _("Semantic accuracy"),
        "label_vi": "Độ chính xác ý nghĩa",
        "rubric": (
            ("5", "Đúng hoàn toàn ý nghĩa cốt lõi như giải thích gốc.", "The core meaning exactly as the reference."),
            ("3", "Đúng ý chính nhưng có chỗ lệch hoặc mơ hồ.", "The main idea, with some drift or vagueness."),
            ("1", "Chỉ hiểu nghĩa đen hoặc lệch phần lớn.", "Only the literal sense, or mostly off."),
            ("0", "Sai lệch hoàn toàn.", "Entirely wrong."),
        ),
    },
    {
        "field": "completeness",
        "label": _("Interpretive completeness"),
        "label_vi": "Độ đầy đủ của diễn giải",
        "rubric": (
            (
                "5",
                "Có đủ các ý chính, sắc thái và ngữ cảnh dùng.",
                "Every main point, the nuance and the usual context.",
            ),
            ("3", "Thiếu một ý hoặc một sắc thái quan trọng.", "One main point or nuance missing."),
            ("1", "Thiếu hầu hết các ý chính.", "Most main points missing."),
            ("0", "Không có ý nào của giải thích gốc.", "None of the reference's points."),
        ),
    },
    {
        "field": "native_alignment",
        "label": _("Alignment with native speakers' understanding"),
        "label_vi": "Phù hợp với cách hiểu của người bản ngữ",
        "rubric": (
            ("5", "Người Việt sẽ hiểu và dùng câu này đúng như vậy.", "How a native speaker understands and uses it."),
            (
                "3",
                "Chấp nhận được nhưng không tự nhiên hoặc thiếu ẩn ý.",
                "Acceptable, but unnatural or missing the implied sense.",
            ),
            ("1", "Người bản ngữ thấy xa lạ hoặc sai ngữ cảnh.", "Strange to a native speaker, or the wrong context."),
            ("0", "Trái với cách hiểu của người bản ngữ.", "Contrary to native understanding."),
        ),
    },
    {
        "field": "score",
        "label": _("Overall score"),
        "label_vi": "Độ tương đồng tổng thể",
        "rubric": (
            ("5", "Rất tương đồng với giải thích gốc.", "Very close to the reference."),
            ("3", "Tương đồng một phần.", "Partly close."),
            ("1", "Rất ít tương đồng.", "Barely close."),
            (
                "0",
                "Không tương đồng; 0 khi độ chính xác ý nghĩa là 0.",
                "Not close; 0 whenever semantic accuracy is 0.",
            ),
        ),
    },
)
SCORE_FIELDS = tuple(d["field"] for d in DIMENSIONS)


def _score(value) -> int | None:
    return None if value == CANNOT_JUDGE else int(value)


def _score_field(dimension: dict, *, overall: bool = False) -> forms.TypedChoiceField:
    """Every dimension is required: a blank one is refused by name, unless "cannot judge" is chosen
    (the overall score has no such choice). A rater who tabbed past a dimension finds out here."""
    if overall:
        message = _("{dimension}: choose a score from 0 to 5 (the overall score is required).")
    else:
        message = _("{dimension}: choose a score from 0 to 5, or “cannot judge”.")
    return forms.TypedChoiceField(
        label=dimension["label"],
        choices=SCORE_CHOICES if overall else DIMENSION_CHOICES,
        coerce=_score,
        empty_value=None,
        required=True,
        widget=forms.RadioSelect,
        error_messages={"required": format_lazy(message, dimension=dimension["label"])},
    )


def posted_revision(data) -> int | None:
    try:
        return int(data.get("revision", ""))
    except (TypeError, ValueError):
        return None


class RatingForm(forms.Form):
    """0-5 on the three dimensions (or "cannot judge") and overall, a note, and the revision loaded."""

    # 27 radio buttons per panel: their tags are written in Python, the same markup (core.forms).
    default_renderer = InputTagRenderer

    accuracy = _score_field(DIMENSIONS[0])
    completeness = _score_field(DIMENSIONS[1])
    native_alignment = _score_field(DIMENSIONS[2])
    score = _score_field(DIMENSIONS[3], overall=True)
    note = forms.CharField(
        label=_("Note"),
        required=False,
        max_length=NOTE_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("Optional. Only you and the researchers read it."),
    )
    # The revision the form was loaded with: a submit from an older tab is refused, not applied.
    revision = forms.IntegerField(min_value=0, widget=forms.HiddenInput)

    @classmethod
    def initial_for(cls, rating: HumanRating) -> dict:
        """The unsubmitted draft when there is one, else the saved scores (a submitted dimension
        without a score was not judged)."""
        submitted = rating.status == "submitted"
        initial = {
            field: CANNOT_JUDGE if submitted and getattr(rating, field) is None else getattr(rating, field)
            for field in SCORE_FIELDS
        }
        initial["note"] = rating.note
        if rating.draft:
            for field in (*SCORE_FIELDS, "note"):
                if field in rating.draft:
                    initial[field] = rating.draft[field]
        initial["revision"] = rating.revision
        return initial

    def dimension_rows(self) -> list[dict]:
        return [
            {**dimension, "field": self[dimension["field"]], "name": dimension["field"]} for dimension in DIMENSIONS
        ]

    def values(self) -> dict:
        return {field: self.cleaned_data.get(field) for field in SCORE_FIELDS}

    def submit_kwargs(self) -> dict:
        return {
            "values": self.values(),
            "note": self.cleaned_data.get("note", ""),
            "revision": self.cleaned_data["revision"],
        }

    def matches(self, rating: HumanRating) -> bool:
        """The saved rating already holds exactly this input (a resent or double-clicked form)."""
        return (
            rating.status == "submitted"
            and all(getattr(rating, field) == value for field, value in self.values().items())
            and rating.note == self.cleaned_data.get("note", "").strip()
        )

    def with_revision(self, revision: int) -> "RatingForm":
        """The same input, now based on ``revision``: submitting it again replaces the saved scores."""
        data = self.data.copy()
        data["revision"] = str(revision)
        form = RatingForm(data)
        form.is_valid()
        return form


def draft_from(data) -> dict:
    """The form as typed, for the draft: raw strings, never validated."""
    return {key: data.get(key, "") for key in (*SCORE_FIELDS, "note")}


def rating_as_draft(rating: HumanRating) -> dict:
    """The submitted rating as the form shows it (a dimension without a score as "cannot judge")."""
    return {
        **{
            field: CANNOT_JUDGE if getattr(rating, field) is None else str(getattr(rating, field))
            for field in SCORE_FIELDS
        },
        "note": rating.note,
    }


class ScoringTaskForm(IdempotentFormMixin, forms.Form):
    name = forms.CharField(
        label=_("Name"),
        max_length=200,
        help_text=_("Raters see this name: do not put the model in it."),
    )
    run = forms.ModelChoiceField(
        label=_("Generation run"),
        queryset=Run.objects.none(),
        help_text=_("Only finished generation runs; their explanations are scored."),
    )
    raters = forms.ModelMultipleChoiceField(
        label=_("Raters"),
        queryset=get_user_model().objects.none(),
        widget=forms.SelectMultiple(attrs={"size": 6}),
        help_text=_("People with the Annotator role. Each scores the shared items and an even share of the rest."),
    )
    n_items = forms.IntegerField(label=_("Number of items"), min_value=1, initial=200)
    n_shared = forms.IntegerField(
        label=_("Shared items"),
        min_value=0,
        initial=50,
        help_text=_("Scored by every rater, for inter-rater reliability."),
    )
    seed = forms.IntegerField(
        label=_("Seed"), min_value=0, required=False, help_text=_("Empty for a random seed; it is recorded either way.")
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["run"].queryset = scoring_runs()
        self.fields["run"].label_from_instance = lambda run: (
            f"#{run.pk} · {run.model.name} · {run.strategy} · {run.dataset.name}"
        )
        self.fields["raters"].queryset = rater_choices()

    def clean(self):
        cleaned = super().clean()
        n_items, n_shared = cleaned.get("n_items"), cleaned.get("n_shared")
        if n_items is not None and n_shared is not None:
            try:
                scoring_task_size_check(n_items=n_items, n_shared=n_shared)
            except ValidationError:
                self.add_error("n_shared", _("At most the number of items."))
        return cleaned

    def create_kwargs(self) -> dict:
        data = self.cleaned_data
        return {
            "name": data["name"],
            "run": data["run"],
            "raters": list(data["raters"]),
            "n_items": data["n_items"],
            "n_shared": data["n_shared"],
            "seed": data.get("seed"),
            "idempotency_key": data.get("idempotency_key"),
        }
