"""A researcher's edits of an imported collection: elements (symbols), questions, background, review."""

from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from ..models import DISTRACTORS, ArtworkElement, ArtworkQuestion, ArtworkQuestionType, CollectionArtwork
from .imports import ARTWORK_KEY


class ArtworkEditError(ValueError):
    """An edit was refused; ``errors`` maps each field ("" for the whole object) to its messages."""

    def __init__(self, errors: dict[str, list[str]]):
        self.errors = {field: list(messages) for field, messages in errors.items()}
        super().__init__("; ".join(message for messages in self.errors.values() for message in messages))


def _user(user):
    return user if user is not None and getattr(user, "is_authenticated", False) else None


def _symbol_users(artwork: CollectionArtwork, symbol: str) -> list[str]:
    return list(
        artwork.questions.filter(type=ArtworkQuestionType.ATTUNED, symbol=symbol)
        .order_by("position")
        .values_list("key", flat=True)
    )


@transaction.atomic
def element_save(
    *,
    artwork: CollectionArtwork,
    name: str,
    is_symbol: bool,
    meaning: str = "",
    element: ArtworkElement | None = None,
    user=None,
) -> ArtworkElement:
    """Create an element of ``artwork`` or update ``element``; renaming a symbol renames it in its questions."""
    name = (name or "").strip()
    meaning = (meaning or "").strip()
    errors: dict[str, list[str]] = {}
    if not name:
        errors["name"] = [_("A name is required.")]
    elif len(name) > 200:
        errors["name"] = [_("The name is longer than 200 characters.")]
    elif artwork.elements.filter(name__iexact=name).exclude(pk=getattr(element, "pk", None)).exists():
        errors["name"] = [_("The artwork already has an element “%(name)s”.") % {"name": name}]
    if element is not None and element.is_symbol and not is_symbol:
        used = _symbol_users(artwork, element.name)
        if used:
            errors["is_symbol"] = [
                _("“%(name)s” is the symbol of the attuned questions %(keys)s; change or delete them first.")
                % {"name": element.name, "keys": ", ".join(used)}
            ]
    if errors:
        raise ArtworkEditError(errors)
    if element is None:
        position = (artwork.elements.aggregate(top=Max("position"))["top"] or 0) + 1
        return ArtworkElement.objects.create(
            artwork=artwork,
            name=name,
            is_symbol=bool(is_symbol),
            meaning=meaning,
            position=position,
            edited_by=_user(user),
        )
    old_name = element.name
    element.name, element.is_symbol, element.meaning, element.edited_by = name, bool(is_symbol), meaning, _user(user)
    element.save(update_fields=["name", "is_symbol", "meaning", "edited_by"])
    if old_name != name:
        artwork.questions.filter(type=ArtworkQuestionType.ATTUNED, symbol=old_name).update(
            symbol=name, edited_by=_user(user)
        )
    return element


def element_delete(*, element: ArtworkElement, user=None) -> None:
    used = _symbol_users(element.artwork, element.name) if element.is_symbol else []
    if used:
        raise ArtworkEditError(
            {
                "": [
                    _("“%(name)s” is the symbol of the attuned questions %(keys)s; change or delete them first.")
                    % {"name": element.name, "keys": ", ".join(used)}
                ]
            }
        )
    element.delete()


def _question_errors(*, artwork, instance, type, symbol, text, answer, distractors, key) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    if type not in ArtworkQuestionType.values:
        errors["type"] = [_("Choose attuned or agnostic.")]
    if not text:
        errors["question"] = [_("The question is required.")]
    if not answer:
        errors["answer"] = [_("The answer is required.")]
    if len(distractors) != DISTRACTORS or any(not d for d in distractors):
        errors.setdefault("distractors", []).append(
            _("Give exactly %(n)s distractors; %(got)s are filled in.")
            % {"n": DISTRACTORS, "got": sum(1 for d in distractors if d)}
        )
    folded = [d.casefold() for d in distractors if d]
    if len(set(folded)) != len(folded):
        errors.setdefault("distractors", []).append(_("The distractors must all differ."))
    if answer and answer.casefold() in folded:
        errors.setdefault("distractors", []).append(_("A distractor equals the answer."))
    if type == ArtworkQuestionType.ATTUNED:
        symbols = set(artwork.elements.filter(is_symbol=True).values_list("name", flat=True))
        if not symbol:
            errors["symbol"] = [_("A culturally attuned question is about one of the artwork's symbols: choose it.")]
        elif symbol not in symbols:
            errors["symbol"] = [
                _("“%(symbol)s” is not an element of this artwork marked as a symbol.") % {"symbol": symbol}
            ]
    if key:
        if len(key) > 120 or not ARTWORK_KEY.match(key):
            errors["key"] = [_("Use letters, digits, '.', '_' and '-' only (at most 120).")]
        elif artwork.questions.filter(key=key).exclude(pk=getattr(instance, "pk", None)).exists():
            errors["key"] = [_("The artwork already has a question “%(key)s”.") % {"key": key}]
    return errors


@transaction.atomic
def question_save(
    *,
    artwork: CollectionArtwork,
    type: str,
    text: str,
    answer: str,
    distractors: list[str],
    symbol: str = "",
    key: str = "",
    instance: ArtworkQuestion | None = None,
    user=None,
) -> ArtworkQuestion:
    """Create a question of ``artwork`` or update ``instance``: one answer, five distinct distractors.

    A culturally attuned question names one of the artwork's symbols; an agnostic one none.
    """
    text, answer, symbol, key = (
        (text or "").strip(),
        (answer or "").strip(),
        (symbol or "").strip(),
        (key or "").strip(),
    )
    distractors = [str(d or "").strip() for d in (distractors or [])]
    errors = _question_errors(
        artwork=artwork,
        instance=instance,
        type=type,
        symbol=symbol,
        text=text,
        answer=answer,
        distractors=distractors,
        key=key,
    )
    if errors:
        raise ArtworkEditError(errors)
    if type == ArtworkQuestionType.AGNOSTIC:
        symbol = ""
    if instance is None:
        position = (artwork.questions.aggregate(top=Max("position"))["top"] or 0) + 1
        if not key:
            n = artwork.questions.count() + 1
            while artwork.questions.filter(key=f"{artwork.key}-q{n}").exists():
                n += 1
            key = f"{artwork.key}-q{n}"
        return ArtworkQuestion.objects.create(
            artwork=artwork,
            key=key,
            type=type,
            symbol=symbol,
            question=text,
            answer=answer,
            distractors=distractors,
            position=position,
            edited_by=_user(user),
        )
    instance.type, instance.symbol, instance.question, instance.answer = type, symbol, text, answer
    instance.distractors, instance.edited_by = distractors, _user(user)
    if key:
        instance.key = key
    instance.save(update_fields=["type", "symbol", "question", "answer", "distractors", "edited_by", "key"])
    return instance


def question_delete(*, question: ArtworkQuestion, user=None) -> None:
    question.delete()


def artwork_background_save(*, artwork: CollectionArtwork, background: str, user=None) -> CollectionArtwork:
    artwork.background = (background or "").strip()
    artwork.save(update_fields=["background"])
    return artwork


def artwork_mark_reviewed(*, artwork: CollectionArtwork, user, reviewed: bool = True) -> CollectionArtwork:
    """Record who checked the artwork's symbols and questions (``reviewed=False`` withdraws it)."""
    artwork.reviewed_by = _user(user) if reviewed else None
    artwork.reviewed_at = timezone.now() if reviewed else None
    artwork.save(update_fields=["reviewed_by", "reviewed_at"])
    return artwork
