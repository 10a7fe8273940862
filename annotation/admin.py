"""Django admin for the corpus: taxonomy, datasets, expressions and import jobs."""

from django import forms
from django.contrib import admin
from django.db.models import Count
from django.utils.translation import gettext_lazy as _

from .models import (
    AnnotationRound,
    AnnotatorPause,
    Assignment,
    ControlItem,
    Dataset,
    DatasetVersion,
    DatasetVersionItem,
    Expression,
    ImportJob,
    LabelChange,
    RecalibrationNote,
    RoundItem,
    RoundQualitySummary,
    Suggestion,
    SuggestionSet,
    Theme,
    Trait,
    normalize_key,
)
from .services.changes import dataset_changed


class _TaxonomyAdmin(admin.ModelAdmin):
    """The taxonomy is fixed by the paper and seeded by a migration: codes stay, wording may be edited."""

    list_display = ("number", "code", "name_en", "name_vi")
    list_display_links = ("number", "code")
    readonly_fields = ("number", "code")
    search_fields = ("code", "name_en", "name_vi")

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Trait)
class TraitAdmin(_TaxonomyAdmin):
    list_display = ("number", "code", "aspect", "name_en", "name_vi")
    fields = ("number", "code", "aspect", "name_en", "name_vi", "description_en", "description_vi")


@admin.register(Theme)
class ThemeAdmin(_TaxonomyAdmin):
    fields = ("number", "code", "name_en", "name_vi", "description_en", "description_vi")


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ("name", "expression_count", "created_by", "created_at")
    search_fields = ("name", "description")
    readonly_fields = ("created_at",)
    list_select_related = ("created_by",)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_expressions=Count("expressions"))

    @admin.display(description=_("Expressions"), ordering="n_expressions")
    def expression_count(self, obj):
        return obj.n_expressions


EXPRESSION_FIELDS = (
    "dataset",
    "text",
    "explanation",
    "kind",
    "source",
    "external_id",
    "traits",
    "theme",
    "metadata",
)


class ExpressionAdminForm(forms.ModelForm):
    class Meta:
        model = Expression
        fields = EXPRESSION_FIELDS

    def clean(self):
        cleaned = super().clean()
        text, dataset = cleaned.get("text"), cleaned.get("dataset")
        if text and dataset:
            # The unique constraint is on normalized_key, which the form does
            # not edit, so Django would not check it: do it here, not as a 500.
            duplicate = Expression.objects.filter(dataset=dataset, normalized_key=normalize_key(text))
            if self.instance.pk:
                duplicate = duplicate.exclude(pk=self.instance.pk)
            if duplicate.exists():
                self.add_error(
                    "text", _("This dataset already holds this expression (ignoring case, spacing and Unicode form).")
                )
        return cleaned


@admin.register(Expression)
class ExpressionAdmin(admin.ModelAdmin):
    form = ExpressionAdminForm
    list_display = ("text", "dataset", "kind", "theme", "trait_codes")
    list_filter = ("dataset", "kind", "theme", "traits")
    search_fields = ("text", "explanation", "external_id")
    filter_horizontal = ("traits",)
    readonly_fields = ("normalized_key", "created_at")
    list_select_related = ("dataset", "theme")
    fields = (
        "dataset",
        "text",
        "normalized_key",
        "explanation",
        "kind",
        "source",
        "external_id",
        "traits",
        "theme",
        "metadata",
        "created_at",
    )

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("traits")

    @admin.display(description=_("Traits"))
    def trait_codes(self, obj):
        return ", ".join(trait.code for trait in obj.traits.all())

    def save_model(self, request, obj, form, change):
        obj.normalized_key = normalize_key(obj.text)
        super().save_model(request, obj, form, change)
        # The admin writes around the services: the datasets' stored counts are recounted all the same.
        dataset_changed(dataset_id=obj.dataset_id)
        if change and "dataset" in form.changed_data and form.initial.get("dataset"):
            dataset_changed(dataset_id=form.initial["dataset"])

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        dataset_changed(dataset_id=obj.dataset_id)

    def delete_queryset(self, request, queryset):
        datasets = set(queryset.values_list("dataset_id", flat=True))
        super().delete_queryset(request, queryset)
        for dataset_id in datasets:
            dataset_changed(dataset_id=dataset_id)


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    """Read-only: jobs are created and run by the import service. The uploaded bytes are never shown."""

    list_display = ("filename", "dataset_name", "status", "report_summary", "created_by", "created_at", "finished_at")
    list_filter = ("status",)
    search_fields = ("filename", "dataset_name")
    list_select_related = ("created_by",)
    fields = (
        "filename",
        "dataset_name",
        "dataset",
        "status",
        "report_summary",
        "column_map",
        "report",
        "created_by",
        "created_at",
        "finished_at",
    )
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).defer("content")

    @admin.display(description=_("Result"))
    def report_summary(self, obj):
        return (obj.report or {}).get("summary", "")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class _ReadOnlyAdmin(admin.ModelAdmin):
    """Workflow records change only through the services, which keep the history and
    the blindness rule; the admin shows them for inspection."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(SuggestionSet)
class SuggestionSetAdmin(_ReadOnlyAdmin):
    list_display = ("name", "dataset", "model_name", "prompt_version", "created_at")
    list_filter = ("dataset",)


@admin.register(Suggestion)
class SuggestionAdmin(_ReadOnlyAdmin):
    list_display = ("expression", "suggestion_set")
    list_filter = ("suggestion_set",)
    list_select_related = ("expression", "suggestion_set")


@admin.register(AnnotationRound)
class AnnotationRoundAdmin(_ReadOnlyAdmin):
    list_display = (
        "name",
        "dataset",
        "status",
        "annotators_per_item",
        "hide_suggestions_fraction",
        "seed",
        "created_at",
    )
    list_filter = ("status", "dataset")


@admin.register(RoundItem)
class RoundItemAdmin(_ReadOnlyAdmin):
    list_display = ("expression", "round", "status", "suggestions_hidden", "final_theme", "resolved_by")
    list_filter = ("round", "status", "suggestions_hidden")
    list_select_related = ("expression", "round", "final_theme", "resolved_by")


@admin.register(Assignment)
class AssignmentAdmin(_ReadOnlyAdmin):
    list_display = ("item", "annotator", "position", "status", "theme", "flagged", "submitted_at")
    list_filter = ("status", "item__round", "annotator")
    list_select_related = ("item__expression", "annotator", "theme")


@admin.register(LabelChange)
class LabelChangeAdmin(_ReadOnlyAdmin):
    list_display = ("item", "field", "old_value", "new_value", "actor", "at")
    list_filter = ("field", "item__round")
    list_select_related = ("item", "actor")


# Quality records (controls, pauses, recalibration notes) are kept by the round's Quality tab.
@admin.register(ControlItem)
class ControlItemAdmin(_ReadOnlyAdmin):
    list_display = ("expression", "round", "theme", "source_version")
    list_filter = ("round",)
    list_select_related = ("expression", "round", "theme", "source_version")


@admin.register(AnnotatorPause)
class AnnotatorPauseAdmin(_ReadOnlyAdmin):
    list_display = ("annotator", "round", "paused_by", "paused_at")
    list_filter = ("round",)
    list_select_related = ("annotator", "round", "paused_by")


@admin.register(RoundQualitySummary)
class RoundQualitySummaryAdmin(_ReadOnlyAdmin):
    list_display = ("round", "computed_at", "stamp")
    list_select_related = ("round",)


@admin.register(RecalibrationNote)
class RecalibrationNoteAdmin(_ReadOnlyAdmin):
    list_display = ("annotator", "round", "created_by", "created_at", "seen_at")
    list_filter = ("round",)
    list_select_related = ("annotator", "round", "created_by")


@admin.register(DatasetVersion)
class DatasetVersionAdmin(_ReadOnlyAdmin):
    list_display = ("name", "round", "created_by", "created_at")


@admin.register(DatasetVersionItem)
class DatasetVersionItemAdmin(_ReadOnlyAdmin):
    list_display = ("text", "version", "theme", "provenance")
    list_filter = ("version", "provenance")
