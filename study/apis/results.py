"""Study API (results)."""

urlpatterns = []
