from django.apps import AppConfig


class CoreConfig(AppConfig):
    """What every app uses and no app owns: roles, permissions, the API's base, files and tables."""

    name = "core"
    verbose_name = "Core"

    def ready(self):
        from core.apis.common import text_fields_take_only_text

        text_fields_take_only_text()
