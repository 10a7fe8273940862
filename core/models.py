from django.conf import settings
from django.db import models


class IdempotencyKey(models.Model):
    """One create request, by the key its form or API client sent, and what it created.

    A form carries a fresh key each time it is rendered, an API client sends one in the
    ``Idempotency-Key`` header; a second request with the same key gets the first one's result.
    """

    scope = models.CharField(max_length=64)
    key = models.CharField(max_length=64)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    object_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["scope", "user", "key"], name="core_idempotency_key_once")]

    def __str__(self):
        return f"{self.scope} {self.key}"
