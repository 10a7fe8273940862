"""Artwork collections over the API (read only; researchers)."""

from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import ApiMixin, error_responses
from core.permissions import IsResearcher

from ..models import ArtworkCollection
from ..selectors import collections as selectors


class CollectionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    description = serializers.CharField()
    created_at = serializers.DateTimeField()
    n_artworks = serializers.IntegerField()
    n_reviewed = serializers.IntegerField(help_text="Artworks a researcher marked as reviewed.")


class ElementSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    is_symbol = serializers.BooleanField()
    meaning = serializers.CharField()


class QuestionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField()
    type = serializers.CharField(help_text="attuned or agnostic.")
    symbol = serializers.CharField(help_text="The element the attuned question is about; empty for agnostic ones.")
    question = serializers.CharField()
    answer = serializers.CharField()
    distractors = serializers.ListField(child=serializers.CharField(), help_text="Five distinct wrong options.")


class ArtworkSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField(help_text="The artwork's id in the imported file.")
    title = serializers.CharField()
    artist = serializers.CharField()
    date = serializers.CharField()
    culture = serializers.CharField()
    comment = serializers.CharField()
    background = serializers.CharField()
    image_url = serializers.SerializerMethodField(help_text="The image (researchers only).")
    image_sha256 = serializers.CharField()
    reviewed_at = serializers.DateTimeField(allow_null=True)
    reviewed_by = serializers.SerializerMethodField()
    elements = ElementSerializer(many=True)
    questions = QuestionSerializer(many=True)

    def get_image_url(self, artwork) -> str:
        return reverse("artworks:artwork_image", args=[artwork.collection_id, artwork.pk])

    def get_reviewed_by(self, artwork) -> str | None:
        return artwork.reviewed_by.get_username() if artwork.reviewed_by_id else None


class CollectionDetailSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    description = serializers.CharField()
    created_at = serializers.DateTimeField()
    artworks = ArtworkSerializer(many=True)


class CollectionListApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="evaluation_collections_list",
        responses={200: CollectionSerializer(many=True), **error_responses(401, 403)},
    )
    def get(self, request):
        return Response(CollectionSerializer(selectors.collection_list(), many=True).data)


class CollectionDetailApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="evaluation_collections_retrieve",
        responses={200: CollectionDetailSerializer, **error_responses(401, 403, 404)},
        description="One collection with its artworks, their elements (culture symbols and others) and questions.",
    )
    def get(self, request, pk: int):
        try:
            collection = selectors.collection_with_artworks(pk=pk)
        except ArtworkCollection.DoesNotExist:
            raise Http404 from None
        data = CollectionDetailSerializer(
            {
                "id": collection.pk,
                "name": collection.name,
                "description": collection.description,
                "created_at": collection.created_at,
                "artworks": list(collection.artworks.all()),
            }
        ).data
        return Response(data)
