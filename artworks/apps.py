from django.apps import AppConfig


class ArtworksConfig(AppConfig):
    name = "artworks"
    verbose_name = "Artworks"
