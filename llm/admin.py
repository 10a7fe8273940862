"""Django admin for the llm app: the model registry (capabilities stay editable: a researcher may declare them)."""

from django.contrib import admin

from .models import ModelConfig


@admin.register(ModelConfig)
class ModelConfigAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "provider",
        "model_id",
        "base_url",
        "api_key_env",
        "max_concurrency",
        "requests_per_minute",
        "timeout",
        "supports_vision",
        "supports_logprobs",
        "price_input",
        "price_output",
        "probed_at",
        "builtin",
    )
    list_filter = ("provider", "builtin", "supports_vision", "supports_logprobs")
    search_fields = ("name", "model_id")
    # What probe_model saw is its record: the capabilities themselves stay editable (a researcher may declare them).
    readonly_fields = ("created_by", "created_at", "probed_at", "probe")
