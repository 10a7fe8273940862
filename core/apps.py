from django.apps import AppConfig


class CoreConfig(AppConfig):
    """What every app uses and no app owns: roles, permissions, the API's base, files and tables."""

    name = "core"
    verbose_name = "Core"
