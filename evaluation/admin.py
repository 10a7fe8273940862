"""Django admin for the evaluation app: read-mostly, because runs and items are written by the engine only."""

from django.contrib import admin

from .models import PromptTemplate, Run, RunItem


@admin.register(PromptTemplate)
class PromptTemplateAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "short_hash", "reference", "ours", "builtin", "created_at")
    list_filter = ("kind", "ours", "builtin")
    search_fields = ("name", "content_hash", "reference")
    # A template's text is its identity (the hash): a change is a new version, added from the prompts page.
    readonly_fields = (
        "name",
        "kind",
        "messages",
        "content_hash",
        "reference",
        "ours",
        "builtin",
        "created_by",
        "created_at",
    )

    @admin.display(description="hash")
    def short_hash(self, obj):
        return obj.content_hash[:12]

    def has_add_permission(self, request):
        return False


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "model", "strategy", "dataset", "status", "created_at", "finished_at")
    list_filter = ("kind", "status", "model")
    readonly_fields = [f.name for f in Run._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(RunItem)
class RunItemAdmin(admin.ModelAdmin):
    list_display = ("id", "run", "expression", "status", "score", "correct", "cached", "attempts")
    list_filter = ("status", "cached", "run__kind")
    list_select_related = ("run", "expression")
    raw_id_fields = ("run", "expression", "source_item")
    readonly_fields = [f.name for f in RunItem._meta.fields]

    def has_add_permission(self, request):
        return False
