"""The pipeline runs' models are the llm app's now (llm 0002 copied them with their ids)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("artworks", "0003_pipeline_cost"),
        ("llm", "0002_rows_from_evaluation"),
    ]

    operations = [
        migrations.AlterField(
            model_name="artworkpipelinerun",
            name="builder",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="llm.modelconfig",
            ),
        ),
        migrations.AlterField(
            model_name="artworkpipelinerun",
            name="listener",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="+", to="llm.modelconfig"
            ),
        ),
        migrations.AlterField(
            model_name="artworkpipelinerun",
            name="speaker",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="+", to="llm.modelconfig"
            ),
        ),
    ]
