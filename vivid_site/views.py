from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from annotation.selectors import dataset_list


@login_required
def home(request):
    """Each role sees what it can do; a signed-in user with no role is told whom to ask."""
    return render(request, "home.html", {"datasets": dataset_list()[:10]})
