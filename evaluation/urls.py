"""URL routes of the evaluation app (none yet)."""

app_name = "evaluation"

urlpatterns = []
