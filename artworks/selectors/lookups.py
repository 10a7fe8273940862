"""One look-up per entity for the pipeline's and collections' pages and their API: the object, or a 404
(core.http.found_or_404; DRF turns it into its detail). Imported directly
(``from artworks.selectors.lookups import ...``)."""

from core.http import found_or_404

from ..models import ArtworkPipelineRun
from .pipeline import artwork_run_get


def artwork_run_or_404(pk: int) -> ArtworkPipelineRun:
    """A pipeline run with the collection and models its pages name."""
    return found_or_404(artwork_run_get(pk=pk), "No such run.")


__all__ = ["artwork_run_or_404"]
