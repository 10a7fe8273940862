from django.contrib import admin

from .models import ApiCall, BonusBatch, ProlificStudy, ProlificSubmission, WebhookDelivery

admin.site.register([ProlificStudy, ProlificSubmission, BonusBatch, ApiCall, WebhookDelivery])
