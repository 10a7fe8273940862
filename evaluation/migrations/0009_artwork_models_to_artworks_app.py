"""The artwork pipeline's models leave the evaluation app's state for the artworks app (artworks 0001).

State only: their tables (still named evaluation_*) and rows stay where they are. Models that point
at others go first, so no state ever holds a reference to a model already gone.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0008_artwork_run_queued_at"),
        ("artworks", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.DeleteModel(name="ListenerAnswer"),
                migrations.DeleteModel(name="SpeakerCandidate"),
                migrations.DeleteModel(name="PipelineItem"),
                migrations.DeleteModel(name="ArtworkPipelineRun"),
                migrations.DeleteModel(name="ArtworkQuestion"),
                migrations.DeleteModel(name="ArtworkElement"),
                migrations.DeleteModel(name="CollectionArtwork"),
                migrations.DeleteModel(name="ArtworkCollection"),
            ],
        ),
    ]
