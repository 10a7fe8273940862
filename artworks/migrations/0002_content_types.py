"""The moved models' content types follow them from app label "evaluation" to "artworks", so their
permissions (and whoever holds them) and the admin log stay attached to the same rows."""

from django.db import migrations

MODELS = (
    "artworkcollection",
    "collectionartwork",
    "artworkelement",
    "artworkquestion",
    "artworkpipelinerun",
    "pipelineitem",
    "speakercandidate",
    "listeneranswer",
)


def _relabel(apps, schema_editor, *, old: str, new: str):
    ContentType = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    for model in MODELS:
        # A row already under the new label (post_migrate made it before this ran) holds no
        # permission anyone was given; the old row, which may, wins.
        if ContentType.objects.using(db).filter(app_label=old, model=model).exists():
            ContentType.objects.using(db).filter(app_label=new, model=model).delete()
            ContentType.objects.using(db).filter(app_label=old, model=model).update(app_label=new)


def forwards(apps, schema_editor):
    _relabel(apps, schema_editor, old="evaluation", new="artworks")


def backwards(apps, schema_editor):
    _relabel(apps, schema_editor, old="artworks", new="evaluation")


class Migration(migrations.Migration):
    dependencies = [
        ("artworks", "0001_initial"),
        ("evaluation", "0009_artwork_models_to_artworks_app"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
