"""The endpoint Prolific's webhooks call: submission status changes, signed with the workspace's secret.

Not a DRF view: Prolific sends no user credentials, only its signature, and the answer is a bare status.
"""

from django.http import HttpResponse, HttpResponseForbidden
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from .. import services


@csrf_exempt
@require_POST
def prolific_webhook(request):
    try:
        delivery = services.prolific_webhook_receive(
            body=request.body, headers=request.headers, remote_addr=request.META.get("REMOTE_ADDR", "")
        )
    except services.WebhookSignatureError:
        # The service has recorded the delivery and logged it.
        return HttpResponseForbidden("invalid signature", content_type="text/plain; charset=utf-8")
    return HttpResponse(delivery.outcome or "ok", content_type="text/plain; charset=utf-8")
