"""The artwork pipeline's models move from the evaluation app to this one, in the migration state only.

Their tables keep the names they had in evaluation (``db_table``) and their rows, so nothing is
created in the database here; evaluation 0009 removes the same models from evaluation's state.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("evaluation", "0008_artwork_run_queued_at"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="ArtworkCollection",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(max_length=200, unique=True)),
                        ("description", models.TextField(blank=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "created_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evaluation_artworkcollection",
                        "ordering": ["name"],
                    },
                ),
                migrations.CreateModel(
                    name="ArtworkPipelineRun",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("groups", models.JSONField(default=list)),
                        ("samples", models.PositiveSmallIntegerField(default=10)),
                        ("temperature", models.FloatField(default=1.0)),
                        ("lam", models.FloatField(default=0.0)),
                        ("word_limit", models.PositiveSmallIntegerField(default=75)),
                        (
                            "limit",
                            models.PositiveIntegerField(blank=True, help_text="Only the first N artworks.", null=True),
                        ),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("queued", "Queued"),
                                    ("running", "Running"),
                                    ("done", "Done"),
                                    ("failed", "Failed"),
                                    ("cancelled", "Cancelled"),
                                ],
                                default="queued",
                                max_length=12,
                            ),
                        ),
                        ("error", models.TextField(blank=True)),
                        ("reproducibility", models.JSONField(blank=True, default=dict)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        ("queued_at", models.DateTimeField(blank=True, null=True)),
                        ("worker_token", models.CharField(blank=True, max_length=32)),
                        ("heartbeat_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "builder",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="evaluation.modelconfig",
                            ),
                        ),
                        (
                            "collection",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="pipeline_runs",
                                to="artworks.artworkcollection",
                            ),
                        ),
                        (
                            "created_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "listener",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="evaluation.modelconfig",
                            ),
                        ),
                        (
                            "speaker",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="evaluation.modelconfig",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evaluation_artworkpipelinerun",
                        "ordering": ["-created_at"],
                    },
                ),
                migrations.CreateModel(
                    name="CollectionArtwork",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("key", models.CharField(help_text="The artwork's id in the imported file.", max_length=100)),
                        ("title", models.CharField(max_length=300)),
                        ("artist", models.CharField(blank=True, max_length=300)),
                        ("date", models.CharField(blank=True, max_length=100)),
                        ("culture", models.CharField(max_length=40)),
                        ("comment", models.TextField(blank=True)),
                        ("image", models.FileField(max_length=300, upload_to="collections/")),
                        ("image_sha256", models.CharField(blank=True, max_length=64)),
                        ("background", models.TextField(blank=True)),
                        ("reviewed_at", models.DateTimeField(blank=True, null=True)),
                        ("position", models.PositiveIntegerField(default=0)),
                        (
                            "collection",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="artworks",
                                to="artworks.artworkcollection",
                            ),
                        ),
                        (
                            "reviewed_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evaluation_collectionartwork",
                        "ordering": ["collection", "position"],
                    },
                ),
                migrations.CreateModel(
                    name="ArtworkQuestion",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("key", models.CharField(max_length=120)),
                        ("symbol", models.CharField(blank=True, max_length=200)),
                        (
                            "type",
                            models.CharField(
                                choices=[("attuned", "Culturally attuned"), ("agnostic", "Culturally agnostic")],
                                max_length=10,
                            ),
                        ),
                        ("question", models.TextField()),
                        ("answer", models.TextField()),
                        ("distractors", models.JSONField(default=list)),
                        ("position", models.PositiveIntegerField(default=0)),
                        (
                            "edited_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "artwork",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="questions",
                                to="artworks.collectionartwork",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evaluation_artworkquestion",
                        "ordering": ["artwork", "type", "position"],
                    },
                ),
                migrations.CreateModel(
                    name="ArtworkElement",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(max_length=200)),
                        ("is_symbol", models.BooleanField(default=False)),
                        ("meaning", models.TextField(blank=True)),
                        ("position", models.PositiveIntegerField(default=0)),
                        (
                            "edited_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "artwork",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="elements",
                                to="artworks.collectionartwork",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evaluation_artworkelement",
                        "ordering": ["artwork", "position"],
                    },
                ),
                migrations.CreateModel(
                    name="ListenerAnswer",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("group", models.CharField(max_length=40)),
                        ("familiar", models.BooleanField()),
                        (
                            "condition",
                            models.CharField(
                                choices=[
                                    ("no_description", "No description"),
                                    ("base", "Base speaker"),
                                    ("pragmatic", "Pragmatic speaker"),
                                ],
                                max_length=20,
                            ),
                        ),
                        ("option_scores", models.JSONField(default=list)),
                        ("chosen", models.TextField()),
                        ("correct", models.BooleanField()),
                        (
                            "question",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="artworks.artworkquestion",
                            ),
                        ),
                        (
                            "run",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="listener_answers",
                                to="artworks.artworkpipelinerun",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evaluation_listeneranswer",
                        "ordering": ["run", "question", "group", "condition"],
                    },
                ),
                migrations.CreateModel(
                    name="PipelineItem",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "step",
                            models.CharField(
                                choices=[
                                    ("symbols", "Culture symbols"),
                                    ("background", "Background"),
                                    ("attuned_questions", "Culturally attuned questions"),
                                    ("agnostic_questions", "Culturally agnostic questions"),
                                    ("base", "Base speaker"),
                                    ("pragmatic", "Pragmatic speaker"),
                                    ("listener", "Simulated listener"),
                                ],
                                max_length=20,
                            ),
                        ),
                        ("group", models.CharField(blank=True, max_length=40)),
                        (
                            "status",
                            models.CharField(
                                choices=[("pending", "Pending"), ("done", "Done"), ("failed", "Failed")],
                                default="pending",
                                max_length=10,
                            ),
                        ),
                        ("attempts", models.PositiveSmallIntegerField(default=0)),
                        ("messages", models.JSONField(blank=True, default=list)),
                        ("response", models.TextField(blank=True)),
                        ("error", models.TextField(blank=True)),
                        ("image_seen", models.BooleanField(null=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "artwork",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="artworks.collectionartwork",
                            ),
                        ),
                        (
                            "run",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="items",
                                to="artworks.artworkpipelinerun",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evaluation_pipelineitem",
                        "ordering": ["run", "id"],
                    },
                ),
                migrations.CreateModel(
                    name="SpeakerCandidate",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("group", models.CharField(max_length=40)),
                        (
                            "speaker",
                            models.CharField(choices=[("base", "Base"), ("pragmatic", "Pragmatic")], max_length=10),
                        ),
                        ("index", models.PositiveSmallIntegerField(default=0)),
                        ("text", models.TextField()),
                        ("raw_text", models.TextField(blank=True)),
                        ("likelihood", models.FloatField(blank=True, null=True)),
                        ("listener_score", models.FloatField(blank=True, null=True)),
                        ("combined", models.FloatField(blank=True, null=True)),
                        ("chosen", models.BooleanField(default=False)),
                        (
                            "artwork",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="artworks.collectionartwork",
                            ),
                        ),
                        (
                            "run",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="candidates",
                                to="artworks.artworkpipelinerun",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evaluation_speakercandidate",
                        "ordering": ["run", "artwork", "group", "speaker", "index"],
                    },
                ),
                migrations.AddConstraint(
                    model_name="collectionartwork",
                    constraint=models.UniqueConstraint(
                        fields=("collection", "key"), name="collection_artwork_unique_key"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="artworkquestion",
                    constraint=models.UniqueConstraint(fields=("artwork", "key"), name="artwork_question_unique_key"),
                ),
                migrations.AddConstraint(
                    model_name="artworkelement",
                    constraint=models.UniqueConstraint(fields=("artwork", "name"), name="artwork_element_unique_name"),
                ),
                migrations.AddConstraint(
                    model_name="listeneranswer",
                    constraint=models.UniqueConstraint(
                        fields=("run", "question", "group", "condition"), name="listener_answer_unique"
                    ),
                ),
                migrations.AddIndex(
                    model_name="pipelineitem",
                    index=models.Index(fields=["run", "status"], name="evaluation__run_id_e91979_idx"),
                ),
                migrations.AddConstraint(
                    model_name="pipelineitem",
                    constraint=models.UniqueConstraint(
                        fields=("run", "artwork", "step", "group"), name="pipeline_item_unique_step"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="speakercandidate",
                    constraint=models.UniqueConstraint(
                        fields=("run", "artwork", "group", "speaker", "index"), name="candidate_unique"
                    ),
                ),
            ],
        ),
    ]
