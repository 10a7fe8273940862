"""The annotator's review form. It checks input only; the review services decide what is valid."""

from django import forms
from django.core.exceptions import ValidationError
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_lazy as _

from core.forms import InputTagRenderer
from core.localization import localized_description, localized_name

from ..models import Assignment, AssignmentStatus, Theme, Trait, TraitDecision

DECISION_PREFIX = "decision_"
# Single keys that set a decision on the current trait row (static/js/review.js).
DECISION_KEYS = {TraitDecision.ACCEPT: "a", TraitDecision.REJECT: "r", TraitDecision.UNSURE: "u"}
NOTE_MAX_LENGTH = 4000


class ReviewForm(forms.Form):
    """Accept / reject / unsure per suggested trait, added traits, one theme, a flag and a note.

    The decision fields exist only for the traits suggested on this item; the
    added-traits checkboxes offer the others (all five when no suggestion is shown).
    """

    theme = forms.ChoiceField(
        label=_("Theme"), widget=forms.RadioSelect, error_messages={"required": _("Choose one theme.")}
    )
    added_traits = forms.MultipleChoiceField(label=_("Traits"), required=False, widget=forms.CheckboxSelectMultiple)
    flagged = forms.BooleanField(label=_("Flag for removal or discussion"), required=False)
    note = forms.CharField(
        label=_("Note"),
        required=False,
        max_length=NOTE_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("Optional. Only you and, after the round is locked, the adjudicator read it."),
    )
    # The revision the form was loaded with: a submit from an older tab is refused, not applied.
    revision = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    # Filled in by static/js/review.js from the page's own clock; checked and capped by the service.
    seconds = forms.CharField(required=False, max_length=40, widget=forms.HiddenInput)

    # Some 25 inputs per panel: their tags are written in Python, the same markup (core.forms).
    default_renderer = InputTagRenderer

    def __init__(self, *args, traits: list[Trait], themes: list[Theme], suggested: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.traits = list(traits)
        self.themes = list(themes)
        self.suggested = [code for code in suggested]
        by_code = {t.code: t for t in self.traits}
        self.suggested_traits = [by_code[code] for code in self.suggested if code in by_code]
        self.other_traits = [t for t in self.traits if t.code not in set(self.suggested)]
        self.fields["theme"].choices = [(t.code, localized_name(t)) for t in self.themes]
        self.fields["added_traits"].choices = [(t.code, localized_name(t)) for t in self.other_traits]
        for trait in self.suggested_traits:
            self.fields[DECISION_PREFIX + trait.code] = forms.ChoiceField(
                label=localized_name(trait),
                choices=TraitDecision.choices,
                widget=forms.RadioSelect,
                error_messages={"required": _("Accept, reject or mark unsure.")},
            )

    # --- Rows for the template: each option beside its taxonomy entry -------------
    # Each option's label is written here, not in a template loop: the panel has some 25 of them, and
    # the template language's lookups and escaping per option were a third of the panel's template time.
    # The markup is what the loops wrote before, with the same escaping (tests/annotation/test_review_markup.py).

    def decision_rows(self) -> list[dict]:
        rows = []
        for trait in self.suggested_traits:
            field = self[DECISION_PREFIX + trait.code]
            rows.append(
                {
                    "trait": trait,
                    "field": field,
                    "description": localized_description(trait),
                    "options": [
                        _decision_label(widget, DECISION_KEYS.get(widget.data["value"], "")) for widget in field
                    ],
                }
            )
        return rows

    def theme_options(self) -> list[SafeString]:
        themes = {t.code: t for t in self.themes}
        return [_taxonomy_label(w, themes[w.data["value"]], kind="theme", key="", gap="") for w in self["theme"]]

    def added_options(self) -> list[SafeString]:
        traits = {t.code: t for t in self.other_traits}
        return [
            _taxonomy_label(w, traits[w.data["value"]], kind="trait", key="⇧", gap=" ") for w in self["added_traits"]
        ]

    # --- Between the form, the services and the draft --------------------------------

    def submit_kwargs(self) -> dict:
        data = self.cleaned_data
        return {
            "theme": data["theme"],
            "trait_decisions": {t.code: data[DECISION_PREFIX + t.code] for t in self.suggested_traits},
            "added_traits": list(data["added_traits"]),
            "flagged": data["flagged"],
            "note": data["note"],
            "revision": data["revision"],
            "seconds": data["seconds"] or None,
        }

    def add_service_errors(self, error: ValidationError) -> None:
        """Show a service's ValidationError on the fields it names (the rest above the form)."""
        if not hasattr(error, "error_dict"):
            for message in error.messages:
                self.add_error(None, message)
            return
        for key, messages in error.message_dict.items():
            field = key if key in ("theme", "added_traits", "note") else None
            for message in messages:
                self.add_error(field, message)

    def matches(self, assignment: Assignment) -> bool:
        """Whether the saved answer is exactly this input: a repeated POST, not a second tab's edit."""
        if not self.is_valid():
            return False
        kwargs = self.submit_kwargs()
        kwargs.pop("revision")
        kwargs.pop("seconds")
        return answer_matches(assignment, **kwargs)

    def with_revision(self, revision: int) -> "ReviewForm":
        """The same bound input, to be submitted over a newer saved answer."""
        data = self.data.copy()
        data["revision"] = str(revision)
        form = ReviewForm(data, traits=self.traits, themes=self.themes, suggested=self.suggested, prefix=self.prefix)
        form.is_valid()
        return form

    @classmethod
    def initial_for(cls, assignment: Assignment, *, suggested: list[str], with_draft: bool = True) -> dict:
        """Prefill: the autosaved draft when there is one (and ``with_draft``), else the submitted answer."""
        source = (with_draft and assignment.draft) or answer_as_draft(assignment)
        decisions = source.get("trait_decisions") or {}
        initial = {
            "theme": source.get("theme") or "",
            "added_traits": [code for code in source.get("added_traits") or [] if code not in suggested],
            "flagged": bool(source.get("flagged")),
            "note": source.get("note") or "",
            "revision": assignment.revision,
        }
        for code in suggested:
            if decisions.get(code):
                initial[DECISION_PREFIX + code] = decisions[code]
        return initial


def _decision_label(widget, key: str) -> SafeString:
    return mark_safe(
        f'<label for="{conditional_escape(widget.id_for_label)}" class="decision-{conditional_escape(widget.data["value"])}">'
        f"{widget.tag()} {conditional_escape(widget.choice_label)} <kbd>{conditional_escape(key)}</kbd></label>"
    )


def _taxonomy_label(widget, entry: Trait | Theme, *, kind: str, key: str, gap: str) -> SafeString:
    """A theme's or an added trait's option: its input, its key, its name and its description."""
    number = conditional_escape(entry.number)
    return mark_safe(
        f'<label for="{conditional_escape(widget.id_for_label)}" data-{kind}-number="{number}">{widget.tag()}'
        f" <kbd>{key}{number}</kbd> {conditional_escape(widget.choice_label)}"
        f'{gap}<small class="helptext">{conditional_escape(localized_description(entry))}</small></label>'
    )


def answer_as_draft(assignment: Assignment) -> dict:
    """The saved answer in the shape of a draft (empty values when nothing was submitted)."""
    return {
        "trait_decisions": dict(assignment.trait_decisions or {}),
        "added_traits": sorted(assignment.added_traits or []),
        "theme": assignment.theme.code if assignment.theme_id else "",
        "flagged": assignment.flagged,
        "note": assignment.note,
    }


def answer_matches(assignment: Assignment, *, theme, trait_decisions, added_traits, flagged, note) -> bool:
    """Whether a submission equals the saved answer, so replaying it is harmless."""
    saved = answer_as_draft(assignment)
    return (
        assignment.status == AssignmentStatus.SUBMITTED
        and theme == saved["theme"]
        and {k: v for k, v in (trait_decisions or {}).items() if v} == saved["trait_decisions"]
        and sorted(set(added_traits or [])) == saved["added_traits"]
        and bool(flagged) == saved["flagged"]
        and (note or "").strip() == saved["note"]
    )


def draft_from(data, *, suggested: list[str], trait_codes: set[str], theme_codes: set[str]) -> dict:
    """The unsubmitted input of a review form, kept as typed but limited to known codes."""
    decisions = {}
    for code in suggested:
        value = data.get(DECISION_PREFIX + code, "")
        if value in TraitDecision.values:
            decisions[code] = value
    theme = data.get("theme", "")
    return {
        "trait_decisions": decisions,
        "added_traits": sorted({c for c in data.getlist("added_traits") if c in trait_codes and c not in suggested}),
        "theme": theme if theme in theme_codes else "",
        "flagged": data.get("flagged", "") not in ("", "false", "0", "off"),
        "note": data.get("note", "")[:NOTE_MAX_LENGTH],
    }


def posted_revision(data) -> int | None:
    try:
        return int(data.get("revision", ""))
    except (TypeError, ValueError):
        return None
