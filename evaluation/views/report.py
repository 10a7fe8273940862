"""The judge-versus-human report of a generation run (VIVID §4.1.1, Table 1), and "repeat this judge run".

Researchers only: raters never see it (it shows every rater's scores and every judge score).
"""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from core.decorators import role_required
from core.http import REPORT_FORMATS, download, json_text
from core.roles import RESEARCHER
from llm.services import estimate_text

from .. import services
from ..forms import JudgeRepeatForm
from ..selectors import report as report_selectors
from ..selectors.exports import human_report_csv
from ..selectors.lookups import generation_run_or_404
from ..selectors.scoring import task_list

SCORE_MAX = 5


def _bar(value, lowest: float, highest: float) -> dict:
    """A bar's width in percent of the scale (values below the scale's start draw no bar)."""
    if value is None:
        return {"value": None, "percent": 0.0}
    share = (max(lowest, min(highest, value)) - lowest) / (highest - lowest)
    return {"value": value, "percent": round(100 * share, 1), "negative": value < 0}


def _chart(table1: list[dict]) -> list[dict]:
    rows = []
    for index, row in enumerate(table1):
        rows.append(
            {
                **row,
                "series": index % 8,
                "mean_bar": _bar(row["mean"], 0.0, SCORE_MAX),
                "kappa_bar": _bar(row["cohen_kappa"], 0.0, 1.0),
            }
        )
    return rows


def _confusion_rows(matrix: list[list[int]]) -> list[dict]:
    highest = max((count for row in matrix for count in row), default=0) or 1
    return [
        {
            "score": score,
            "cells": [{"count": count, "shade": round(count / highest, 2)} for count in row],
            "total": sum(row),
        }
        for score, row in enumerate(matrix)
    ]


@require_GET
@role_required(RESEARCHER)
def human_report(request, pk: int):
    run = generation_run_or_404(pk)
    fmt = request.GET.get("format", "")
    if fmt and fmt not in REPORT_FORMATS:
        return HttpResponseBadRequest(
            _("Unknown download format “%(format)s”; use ?format=json or ?format=csv.") % {"format": fmt},
            content_type="text/plain; charset=utf-8",
        )
    report = report_selectors.human_report(run=run)
    if fmt == "json":
        return download(json_text(report), filename=f"run-{run.pk}-human-report.json", fmt="json")
    if fmt == "csv":
        return download(human_report_csv(report), filename=f"run-{run.pk}-human-report.csv", fmt="csv")

    judges = []
    for key, judge in report["judges"].items():
        judges.append(
            {
                **judge,
                "confusion_rows": _confusion_rows(judge["confusion"]),
                "disagreements": report["disagreements"].get(key, []),
                "repeat_form": JudgeRepeatForm(initial={"judge_run": judge["id"]}, auto_id=False),
            }
        )
    inter = report["human"]["inter_rater"]
    context = {
        "run": run,
        "report": report,
        "human": report["human"],
        "inter": inter,
        "inter_confusion_rows": _confusion_rows(inter["confusion"]),
        "judges": judges,
        "noise": report["noise"],
        "table1": _chart(report["table1"]),
        "labels": list(range(SCORE_MAX + 1)),
        # The empty report's next steps: a scoring task for this run, a judge run on it.
        "new_task_url": reverse("evaluation:scoring_task_new") + "?" + urlencode({"run": run.pk}),
        "judge_url": reverse("evaluation:run_new", args=["judge"]) + "?" + urlencode({"source_run": run.pk}),
    }
    if not report["human"]["n_ratings"]:
        context["scoring_tasks"] = list(task_list().filter(run=run))
    return render(request, "evaluation/report_human.html", context)


@require_POST
@role_required(RESEARCHER)
def human_report_repeat(request, pk: int):
    """Start another judge run like the one named, with the next seed, to measure the judge's noise."""
    run = generation_run_or_404(pk)
    form = JudgeRepeatForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest(_("Name the judge run to repeat."), content_type="text/plain; charset=utf-8")
    judge = get_object_or_404(report_selectors.judge_runs_of(run=run), pk=form.cleaned_data["judge_run"])
    try:
        repeat = services.run_repeat(
            judge=judge,
            user=request.user,
            idempotency_key=form.cleaned_data["idempotency_key"],
            confirm_cost=form.cleaned_data["confirm_cost"],
        )
    except ValidationError as exc:
        # Above the threshold: the estimate and what to do, by the judge run's own button.
        messages.error(request, _("Judge run #%(id)s: %(error)s") % {"id": judge.pk, "error": " ".join(exc.messages)})
        return redirect("evaluation:human_report", pk=run.pk)
    started = _("Judge run #%(id)s started: a repeat of #%(source)s with seed %(seed)s.") % {
        "id": repeat.pk,
        "source": judge.pk,
        "seed": repeat.params["seed"],
    }
    if repeat.estimate and not getattr(repeat, "idempotent_repeat", False):
        started = f"{started} {estimate_text(repeat.estimate)}"
    messages.success(request, started)
    return redirect("evaluation:human_report", pk=run.pk)
