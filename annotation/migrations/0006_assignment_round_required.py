# The assignment's round is filled by 0005 for every row: from here on it is required. A migration of
# its own, since PostgreSQL will not alter a table with the previous step's updates still pending.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0005_round_counts_and_quality_summary"),
    ]

    operations = [
        migrations.AlterField(
            model_name="assignment",
            name="round",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="assignments",
                to="annotation.annotationround",
            ),
        ),
        migrations.AddIndex(
            model_name="assignment",
            index=models.Index(fields=["round", "annotator", "position"], name="assignment_queue"),
        ),
        migrations.AddIndex(
            model_name="assignment",
            index=models.Index(fields=["round", "status"], name="assignment_round_status"),
        ),
    ]
