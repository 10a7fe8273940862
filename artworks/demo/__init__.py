"""The demo artwork collection, made in code: six artworks drawn with Pillow and our own comments.

Nothing here comes from the paper's stimuli or a museum. Every image carries the label
"DEMO ARTWORK – drawn by code"; titles and comments were written for the demo. The same
inputs give the same bytes, so writing the folder again changes nothing.
"""

from pathlib import Path

from core.csv_writer import csv_text

from .drawings import DRAWINGS, png

COLLECTION_NAME = "Demo artworks"
LABEL = "DEMO ARTWORK – drawn by code"
ARTIST = "VIVID Studio demo (drawn by code)"
DATE = "2025"

ARTWORKS = [
    {
        "id": "cn-lotus",
        "title": "Lotus Pond in Summer",
        "culture": "chinese",
        "comment": "Pink lotus flowers open on tall stems above broad leaves floating on a still summer pond, and two "
        "mandarin ducks glide side by side between them while a dragonfly hovers close to the water. The lotus "
        "and the duck pair are among the most painted motifs of the Chinese bird-and-flower tradition.",
    },
    {
        "id": "cn-plum",
        "title": "Plum Branch in Snow",
        "culture": "chinese",
        "comment": "A single gnarled plum branch crosses an almost empty ground, its white and pink blossoms already "
        "open while snow still lies on the wood. A black-and-white magpie perches near the tip. Blossoming plum "
        "in late winter was a favourite subject of Chinese scholar painters.",
    },
    {
        "id": "cn-crane",
        "title": "Cranes at Sunrise",
        "culture": "chinese",
        "comment": "Two red-crowned cranes stand on a rock at the edge of the sea as a red sun rises over rolling blue "
        "waves. The birds are reduced to a few clear shapes: white bodies, black necks and the red patch on the "
        "crown. Pictures of cranes were often given as birthday gifts to elders in China.",
    },
    {
        "id": "am-eagle",
        "title": "Bald Eagle over the River",
        "culture": "american",
        "comment": "A bald eagle spreads its wings above a wide river between dark pine forests, holding an olive "
        "branch in one claw and a bundle of arrows in the other. The pose deliberately echoes the eagle of the "
        "Great Seal of the United States.",
    },
    {
        "id": "am-pumpkin",
        "title": "Pumpkin Patch in October",
        "culture": "american",
        "comment": "Orange pumpkins lie among dry vines in front of a red barn, where a scarecrow keeps watch and "
        "autumn leaves drift down. One pumpkin has been carved with a face and lit from inside by a candle. The "
        "scene belongs to a long line of American pictures of farm life at harvest time.",
    },
    {
        "id": "am-lighthouse",
        "title": "Lighthouse on the Maine Coast",
        "culture": "american",
        "comment": "A white lighthouse with a red lantern room stands on dark rocks while waves break below it, a small "
        "sailboat passes far out and three seagulls circle overhead. Lighthouses of the rocky New England coast "
        "have been painted by American artists since the nineteenth century.",
    },
]


def demo_csv() -> bytes:
    rows = [
        [
            artwork["id"],
            artwork["title"],
            ARTIST,
            DATE,
            artwork["culture"],
            artwork["comment"],
            f"images/{artwork['id']}.png",
        ]
        for artwork in ARTWORKS
    ]
    return csv_text(["id", "title", "artist", "date", "culture", "comment", "image"], rows).encode("utf-8")


def write_demo_folder(folder: Path) -> Path:
    """artworks.csv and images/ in ``folder``; files already holding the same bytes are left alone."""
    folder = Path(folder)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    files = {folder / "artworks.csv": demo_csv()}
    for artwork in ARTWORKS:
        files[folder / "images" / f"{artwork['id']}.png"] = png(DRAWINGS[artwork["id"]], LABEL)
    for path, content in files.items():
        if not path.exists() or path.read_bytes() != content:
            path.write_bytes(content)
    return folder


def demo_collection_ensure(*, folder: Path, user=None):
    """The demo collection, imported from ``folder`` when missing: ``(collection, created)``."""
    from ..models import ArtworkCollection
    from ..services.imports import artworks_import

    write_demo_folder(folder)
    collection = ArtworkCollection.objects.filter(name=COLLECTION_NAME).first()
    if collection is not None:
        return collection, False
    collection = artworks_import(
        name=COLLECTION_NAME,
        source=folder,
        user=user,
        description="Six artworks drawn by code for the demo (three American, three Chinese), with our own comments.",
    )
    demo_annotations_ensure(collection=collection, user=user)
    return collection, True


def demo_annotations_ensure(*, collection, user=None) -> int:
    """Our own elements and questions for the demo artworks, as a researcher would have reviewed them.

    The built-in 135M model rarely writes the strict JSON of the construction prompts, so the
    demo ships them: the pipeline then skips those steps and runs the speakers and the listener.
    Artworks that already have elements or questions keep them. Returns the artworks filled.
    """
    import json

    from ..services.editing import element_save, question_save

    annotations = json.loads((Path(__file__).parent / "annotations.json").read_text(encoding="utf-8"))
    filled = 0
    for artwork in collection.artworks.all():
        data = annotations.get(artwork.key)
        if data is None or artwork.elements.exists() or artwork.questions.exists():
            continue
        for element in data["elements"]:
            element_save(artwork=artwork, name=element["name"], is_symbol=element["is_symbol"], user=user)
        for question in data["questions"]:
            question_save(
                artwork=artwork,
                type=question["type"],
                text=question["question"],
                answer=question["answer"],
                distractors=question["distractors"],
                symbol=question["symbol"],
                key=question["id"],
                user=user,
            )
        filled += 1
    return filled
