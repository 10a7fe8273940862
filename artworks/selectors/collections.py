"""Reads of the artwork collections: lists with their counts, and one artwork with everything on it."""

from django.db.models import Count, Prefetch, Q, QuerySet

from ..models import ArtworkCollection, ArtworkElement, ArtworkQuestion, CollectionArtwork


def collection_choices() -> QuerySet[ArtworkCollection]:
    """Every collection by name, for a choice of collection."""
    return ArtworkCollection.objects.order_by("name")


def collection_artwork_get(*, collection_id: int, pk: int) -> CollectionArtwork | None:
    """One artwork of a collection, with who reviewed it; None when it is not in that collection."""
    return (
        CollectionArtwork.objects.select_related("collection", "reviewed_by")
        .filter(pk=pk, collection_id=collection_id)
        .first()
    )


def collection_list() -> QuerySet[ArtworkCollection]:
    return ArtworkCollection.objects.annotate(
        n_artworks=Count("artworks", distinct=True),
        n_reviewed=Count("artworks", filter=Q(artworks__reviewed_at__isnull=False), distinct=True),
    ).order_by("name")


def collection_artworks(*, collection: ArtworkCollection) -> QuerySet[CollectionArtwork]:
    # Two joined relations multiply rows, hence the distinct counts.
    return (
        collection.artworks.annotate(
            n_elements=Count("elements", distinct=True),
            n_symbols=Count("elements", filter=Q(elements__is_symbol=True), distinct=True),
            n_questions=Count("questions", distinct=True),
            n_attuned=Count("questions", filter=Q(questions__type="attuned"), distinct=True),
        )
        .select_related("reviewed_by")
        .order_by("position", "pk")
    )


def collection_with_artworks(*, pk: int) -> ArtworkCollection:
    """One collection with its artworks, elements and questions prefetched (the API's detail)."""
    return ArtworkCollection.objects.prefetch_related(
        Prefetch(
            "artworks",
            queryset=CollectionArtwork.objects.order_by("position", "pk")
            .select_related("reviewed_by")
            .prefetch_related(
                Prefetch("elements", queryset=ArtworkElement.objects.order_by("position", "pk")),
                Prefetch("questions", queryset=ArtworkQuestion.objects.order_by("type", "position", "pk")),
            ),
        )
    ).get(pk=pk)


def artwork_elements(*, artwork: CollectionArtwork) -> QuerySet[ArtworkElement]:
    return artwork.elements.order_by("position", "pk")


def artwork_questions(*, artwork: CollectionArtwork) -> QuerySet[ArtworkQuestion]:
    return artwork.questions.order_by("type", "position", "pk")
