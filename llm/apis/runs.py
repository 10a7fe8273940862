"""Cancel and resume over the API, for a run of any kind on the engine: a kind's API names how to
find its run and how to show it, and gets the same answers (400 naming the status it is in)."""

from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apis.common import ApiMixin
from core.permissions import IsResearcher

from ..services import BatchRunError, batch_run_cancel, batch_run_resume


class RunResumeSerializer(serializers.Serializer):
    retry_failed = serializers.BooleanField(default=False, help_text="Send the failed items again too.")


class BatchRunActionApi(ApiMixin, APIView):
    permission_classes = [IsResearcher]

    def run_or_404(self, pk: int):
        raise NotImplementedError

    def run_detail(self, run) -> dict:
        raise NotImplementedError

    def act(self, request, run) -> None:
        raise NotImplementedError

    def post(self, request, pk: int):
        run = self.run_or_404(pk)
        try:
            self.act(request, run)
        except BatchRunError as exc:
            raise ValidationError({"status": [str(exc)]}) from exc
        return Response(self.run_detail(self.run_or_404(pk)))


class BatchRunCancelApi(BatchRunActionApi):
    """Stop a queued or running run; the items already done are kept."""

    def act(self, request, run) -> None:
        batch_run_cancel(run=run, user=request.user)


class BatchRunResumeApi(BatchRunActionApi):
    """Queue a cancelled, failed or stalled run again; only its pending items (and, asked, its failed
    ones) are done, and the response cache answers what was asked before."""

    def resume(self, **arguments):
        return batch_run_resume(**arguments)

    def act(self, request, run) -> None:
        serializer = RunResumeSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        self.resume(run=run, user=request.user, retry_failed=serializer.validated_data["retry_failed"])
