from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self):
        # An evaluation run is a kind of work on the llm app's engine.
        from llm.kinds import WorkKind, work_kind_register

        from .models import Run, RunItem
        from .selectors.usage import run_calibration_samples

        work_kind_register(
            WorkKind(
                label="evaluation run",
                run_model=Run,
                item_model=RunItem,
                enqueue="evaluation.services.runs.lifecycle.run_execute_enqueue",
                model_fields=("model",),
                calibration_samples=run_calibration_samples,
            )
        )
