"""Django admin for the study app, read-mostly: studies change through their pages and services.

Prolific ids are personal data; only superusers see them here.
"""

from django.contrib import admin

from .models import (
    Answer,
    Artwork,
    Assignment,
    Description,
    DescriptionPair,
    PageVisit,
    Participant,
    Preference,
    Question,
    Study,
    Term,
    WikidataLookup,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows come from imports and participants' sessions; editing them here would bypass the services."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ArtworkInline(admin.TabularInline):
    model = Artwork
    fields = ("key", "title", "culture", "is_qc", "image", "position")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Study)
class StudyAdmin(ReadOnlyAdmin):
    list_display = ("slug", "title", "status", "highlight_status", "terms_status", "quota_per_group", "created_at")
    list_filter = ("status", "highlight_status", "terms_status")
    search_fields = ("slug", "title")
    readonly_fields = ("created_at",)
    exclude = ("package",)
    inlines = [ArtworkInline]


@admin.register(Artwork)
class ArtworkAdmin(ReadOnlyAdmin):
    list_display = ("key", "study", "title", "culture", "is_qc", "position")
    list_filter = ("study", "culture", "is_qc")
    search_fields = ("key", "title", "study__slug")
    list_select_related = ("study",)


@admin.register(Question)
class QuestionAdmin(ReadOnlyAdmin):
    list_display = ("key", "artwork", "type", "symbol")
    list_filter = ("type", "artwork__study")
    search_fields = ("key", "question", "artwork__key", "artwork__study__slug")
    list_select_related = ("artwork__study",)


@admin.register(Description)
class DescriptionAdmin(ReadOnlyAdmin):
    list_display = ("key", "artwork", "speaker", "listener", "model", "self_eval_score")
    list_filter = ("speaker", "listener", "artwork__study")
    search_fields = ("key", "text", "artwork__key", "artwork__study__slug")
    list_select_related = ("artwork__study",)


@admin.register(DescriptionPair)
class DescriptionPairAdmin(ReadOnlyAdmin):
    list_display = ("artwork", "listener", "model_name", "computed_at")
    list_filter = ("listener", "artwork__study")
    search_fields = ("artwork__key", "artwork__study__slug")
    list_select_related = ("artwork__study",)


@admin.register(Term)
class TermAdmin(ReadOnlyAdmin):
    list_display = ("term", "zh", "wikidata", "artwork", "source", "status", "confirmed_by")
    list_filter = ("status", "source", "artwork__study")
    search_fields = ("term", "zh", "wikidata", "artwork__key", "artwork__study__slug")
    list_select_related = ("artwork__study", "confirmed_by")


@admin.register(WikidataLookup)
class WikidataLookupAdmin(ReadOnlyAdmin):
    list_display = ("query", "qid", "zh", "label_language", "fetched_at")
    search_fields = ("query", "qid", "zh")

    def has_delete_permission(self, request, obj=None):
        # Deleting a cached answer makes the next lookup ask Wikidata again.
        return request.user.is_superuser


@admin.register(Participant)
class ParticipantAdmin(ReadOnlyAdmin):
    list_display = (
        "pseudonym",
        "study",
        "group",
        "status",
        "is_test",
        "is_preview",
        "qc_correct",
        "qc_total",
        "entered_at",
    )
    list_filter = ("study", "group", "status", "is_test", "is_preview")
    list_select_related = ("study",)
    readonly_fields = ("pseudonym",)

    def get_list_display(self, request):
        if request.user.is_superuser:
            return ("prolific_pid", *self.list_display)
        return self.list_display

    def get_search_fields(self, request):
        if request.user.is_superuser:
            return ("prolific_pid", "pseudonym", "study__slug")
        return ("study__slug",)

    def get_exclude(self, request, obj=None):
        if request.user.is_superuser:
            return ()
        return ("prolific_pid", "prolific_study_id", "prolific_session_id")


@admin.register(Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    list_display = ("participant", "order", "artwork", "is_qc", "shown")
    list_filter = ("is_qc", "artwork__study")
    search_fields = ("artwork__key", "artwork__study__slug")
    list_select_related = ("participant", "artwork", "shown")
    raw_id_fields = ("participant", "artwork", "shown", "left", "right")


@admin.register(Answer)
class AnswerAdmin(ReadOnlyAdmin):
    list_display = ("assignment", "question", "phase", "is_correct", "confidence", "knew_before", "answered_at")
    list_filter = ("phase", "is_correct", "knew_before")
    search_fields = ("question__key",)
    raw_id_fields = ("assignment", "question")


@admin.register(Preference)
class PreferenceAdmin(ReadOnlyAdmin):
    list_display = ("assignment", "criterion", "side", "chosen", "answered_at")
    list_filter = ("criterion", "side")
    raw_id_fields = ("assignment", "chosen")


@admin.register(PageVisit)
class PageVisitAdmin(ReadOnlyAdmin):
    list_display = ("participant", "step", "shown_at", "seconds", "views")
    search_fields = ("step",)
    raw_id_fields = ("participant",)
