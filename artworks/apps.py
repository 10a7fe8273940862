from django.apps import AppConfig


class ArtworksConfig(AppConfig):
    name = "artworks"
    verbose_name = "Artworks"

    def ready(self):
        # A pipeline run is a kind of work on the llm app's engine.
        from llm.kinds import WorkKind, work_kind_register

        from .models import ArtworkPipelineRun, PipelineItem
        from .services.pipeline import artwork_run_failed_construction

        work_kind_register(
            WorkKind(
                label="artwork pipeline run",
                run_model=ArtworkPipelineRun,
                item_model=PipelineItem,
                enqueue="artworks.services.pipeline.lifecycle.artwork_run_enqueue",
                model_fields=("speaker", "listener", "builder"),
                finish_error=artwork_run_failed_construction,
            )
        )
