from django.apps import AppConfig


class VividSiteConfig(AppConfig):
    name = "vivid_site"
    verbose_name = "VIVID Studio"
