"""The demo artworks, drawn with Pillow shapes. Deterministic: no randomness, fixed sizes."""

import io
import math

from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 640, 440
BANNER = 34


def png(draw_function, label: str) -> bytes:
    image = Image.new("RGB", (WIDTH, HEIGHT), "white")
    draw = ImageDraw.Draw(image)
    draw_function(draw)
    # The label sits on its own band so no drawing can hide it.
    draw.rectangle([0, HEIGHT - BANNER, WIDTH, HEIGHT], fill=(20, 20, 20))
    font = ImageFont.load_default(size=20)
    colour = (255, 235, 120)
    # Pillow's bundled font has no en dash glyph, so a dash is drawn as a line between the words.
    parts = label.split("–")
    dash = 14
    gap = draw.textlength(" ", font=font)
    width = sum(draw.textlength(part.strip(), font=font) for part in parts) + (len(parts) - 1) * (dash + 2 * gap)
    x, y = (WIDTH - width) / 2, HEIGHT - BANNER + 6
    for n, part in enumerate(parts):
        if n:
            draw.line([(x + gap, y + 13), (x + gap + dash, y + 13)], fill=colour, width=2)
            x += dash + 2 * gap
        draw.text((x, y), part.strip(), fill=colour, font=font)
        x += draw.textlength(part.strip(), font=font)
    buffer = io.BytesIO()
    # No timestamps or other metadata, so the same drawing gives the same bytes.
    image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def _sky(draw, top, bottom, height=HEIGHT - BANNER):
    for y in range(height):
        t = y / height
        draw.line([(0, y), (WIDTH, y)], fill=tuple(int(a + (b - a) * t) for a, b in zip(top, bottom, strict=True)))


def _ellipse(draw, cx, cy, rx, ry, **kwargs):
    draw.ellipse([cx - rx, cy - ry, cx + rx, cy + ry], **kwargs)


def _petal_flower(draw, cx, cy, r, petals, colour, centre):
    for n in range(petals):
        a = 2 * math.pi * n / petals
        _ellipse(draw, cx + r * 0.6 * math.cos(a), cy + r * 0.6 * math.sin(a), r * 0.5, r * 0.5, fill=colour)
    _ellipse(draw, cx, cy, r * 0.3, r * 0.3, fill=centre)


def lotus(draw):
    _sky(draw, (226, 240, 236), (150, 196, 190))
    for cx, cy, r in [(110, 330, 70), (300, 360, 85), (520, 320, 75), (420, 390, 50), (200, 250, 45)]:
        _ellipse(draw, cx, cy, r, r * 0.35, fill=(46, 125, 70), outline=(30, 90, 50))
    for x, top in [(170, 150), (360, 120), (480, 170)]:
        draw.line([(x, 330), (x, top + 40)], fill=(60, 110, 60), width=4)
        # A lotus: upright petals in a cup.
        for dx, tilt in [(-28, -12), (-14, -4), (0, 0), (14, 4), (28, 12)]:
            draw.polygon(
                [(x + dx - 14, top + 40), (x + dx + tilt, top - 10), (x + dx + 14, top + 40)],
                fill=(240, 150, 180),
                outline=(200, 90, 130),
            )
    for cx, colour in [(250, (200, 110, 40)), (300, (90, 90, 140))]:
        _ellipse(draw, cx, 300, 26, 14, fill=colour)
        _ellipse(draw, cx + 22, 286, 10, 10, fill=colour)
        draw.polygon([(cx + 30, 286), (cx + 42, 289), (cx + 30, 292)], fill=(230, 160, 40))
    draw.line([(420, 90), (460, 90)], fill=(40, 80, 200), width=4)
    _ellipse(draw, 430, 84, 12, 5, outline=(40, 80, 200))
    _ellipse(draw, 450, 84, 12, 5, outline=(40, 80, 200))


def plum(draw):
    _sky(draw, (240, 238, 232), (214, 214, 220))
    branch = [(20, 330), (150, 280), (230, 210), (330, 190), (430, 130), (560, 110)]
    draw.line(branch, fill=(70, 45, 35), width=16, joint="curve")
    draw.line([(230, 210), (260, 120), (300, 80)], fill=(70, 45, 35), width=9)
    draw.line([(330, 190), (400, 260), (470, 270)], fill=(70, 45, 35), width=8)
    for x, y in branch[:-1]:
        draw.line([(x - 10, y - 10), (x + 30, y - 14)], fill=(250, 250, 255), width=6)
    for x, y in [
        (160, 262),
        (250, 150),
        (295, 85),
        (340, 172),
        (410, 250),
        (460, 262),
        (440, 112),
        (520, 100),
        (200, 232),
        (380, 160),
    ]:
        _petal_flower(draw, x, y, 16, 5, (250, 220, 230), (200, 60, 90))
    # The magpie.
    _ellipse(draw, 500, 78, 30, 16, fill=(20, 20, 30))
    _ellipse(draw, 505, 82, 14, 8, fill=(245, 245, 245))
    _ellipse(draw, 528, 64, 11, 11, fill=(20, 20, 30))
    draw.polygon([(470, 76), (420, 60), (424, 72)], fill=(20, 40, 80))
    draw.polygon([(538, 62), (552, 66), (538, 69)], fill=(60, 60, 60))
    for n in range(40):
        x, y = (n * 137) % WIDTH, (n * 61) % (HEIGHT - BANNER)
        _ellipse(draw, x, y, 3, 3, fill=(255, 255, 255))


def crane(draw):
    _sky(draw, (255, 236, 200), (190, 220, 240), 260)
    _ellipse(draw, 470, 150, 60, 60, fill=(220, 50, 40))
    draw.rectangle([0, 260, WIDTH, HEIGHT - BANNER], fill=(40, 90, 160))
    for n in range(8):
        y = 280 + n * 16
        draw.arc([-40 + (n % 2) * 40, y - 10, 680, y + 40], 200, 340, fill=(230, 240, 255), width=2)
    draw.polygon([(120, 406), (170, 300), (330, 290), (390, 406)], fill=(90, 90, 90))
    for cx in (200, 290):
        _ellipse(draw, cx, 230, 36, 22, fill=(250, 250, 250), outline=(80, 80, 80))
        draw.line([(cx + 20, 220), (cx + 30, 160)], fill=(20, 20, 20), width=7)
        _ellipse(draw, cx + 31, 152, 10, 8, fill=(250, 250, 250))
        _ellipse(draw, cx + 31, 146, 5, 4, fill=(220, 30, 30))
        draw.line([(cx + 38, 152), (cx + 60, 158)], fill=(120, 110, 60), width=3)
        draw.polygon([(cx - 36, 226), (cx - 60, 240), (cx - 30, 238)], fill=(20, 20, 20))
        draw.line([(cx - 6, 250), (cx - 8, 298)], fill=(40, 40, 40), width=3)
        draw.line([(cx + 8, 250), (cx + 10, 298)], fill=(40, 40, 40), width=3)


def pine(draw):
    _sky(draw, (236, 238, 240), (200, 210, 214))
    draw.polygon([(380, 406), (420, 120), (470, 60), (560, 160), (640, 406)], fill=(120, 120, 115))
    draw.polygon([(0, 406), (80, 250), (170, 300), (260, 406)], fill=(150, 150, 145))
    for cx, cy in [(120, 110), (260, 90), (560, 220)]:
        for dx in (-30, 0, 30):
            _ellipse(draw, cx + dx, cy, 40, 18, fill=(250, 250, 252))
    # The pine leans out of the cliff.
    draw.line([(430, 140), (360, 170), (300, 150), (240, 170)], fill=(90, 60, 40), width=12, joint="curve")
    for x, y in [(250, 150), (300, 130), (350, 150), (400, 125), (280, 175)]:
        for n in range(3):
            _ellipse(draw, x + n * 18 - 18, y - n * 6, 30, 12, fill=(30, 90, 60))
    for x in (90, 110, 130, 150):
        draw.line([(x, 406), (x + 6, 260)], fill=(70, 150, 70), width=6)
        for y in range(280, 400, 30):
            draw.polygon([(x + 4, y), (x + 34, y - 10), (x + 4, y + 6)], fill=(90, 170, 80))
    draw.rectangle([190, 340, 260, 380], fill=(170, 60, 40))
    draw.polygon([(180, 340), (225, 310), (270, 340)], fill=(60, 60, 60))


def eagle(draw):
    _sky(draw, (120, 180, 240), (210, 232, 250), 300)
    draw.rectangle([0, 300, WIDTH, HEIGHT - BANNER], fill=(40, 110, 60))
    draw.polygon([(0, 406), (200, 330), (440, 330), (640, 406)], fill=(60, 120, 190))
    for x in range(0, WIDTH, 40):
        top = 290 if x < 180 or x > 460 else 310
        draw.polygon([(x, 330), (x + 20, top - 30), (x + 40, 330)], fill=(20, 80, 45))
    # Wings, body, white head, yellow beak.
    draw.polygon([(320, 170), (120, 90), (180, 150), (110, 170), (300, 200)], fill=(80, 50, 30))
    draw.polygon([(320, 170), (520, 90), (460, 150), (530, 170), (340, 200)], fill=(80, 50, 30))
    _ellipse(draw, 320, 190, 34, 50, fill=(90, 60, 35))
    _ellipse(draw, 320, 130, 24, 22, fill=(250, 250, 250))
    draw.polygon([(330, 128), (356, 136), (332, 144)], fill=(240, 190, 40))
    draw.polygon([(300, 236), (320, 270), (340, 236)], fill=(250, 250, 250))
    # Olive branch (left claw) and arrows (right claw).
    draw.line([(296, 236), (240, 262)], fill=(90, 110, 40), width=4)
    for n in range(5):
        _ellipse(draw, 250 + n * 10, 252 + (n % 2) * 12, 8, 4, fill=(110, 150, 60))
    for n in range(3):
        draw.line([(344, 236), (402, 262 + n * 6)], fill=(110, 80, 40), width=3)
        draw.polygon([(402, 258 + n * 6), (412, 263 + n * 6), (402, 268 + n * 6)], fill=(150, 150, 150))


def pumpkin(draw):
    _sky(draw, (250, 200, 140), (250, 235, 200), 250)
    draw.rectangle([0, 250, WIDTH, HEIGHT - BANNER], fill=(130, 100, 50))
    draw.rectangle([430, 130, 600, 260], fill=(170, 40, 30))
    draw.polygon([(420, 130), (515, 70), (610, 130)], fill=(120, 30, 25))
    draw.rectangle([495, 190, 535, 260], fill=(80, 20, 15))
    # The scarecrow.
    draw.line([(360, 160), (360, 290)], fill=(110, 80, 40), width=6)
    draw.line([(320, 200), (400, 200)], fill=(110, 80, 40), width=6)
    draw.rectangle([342, 195, 378, 250], fill=(60, 90, 160))
    _ellipse(draw, 360, 178, 16, 16, fill=(230, 200, 120))
    draw.polygon([(336, 168), (360, 146), (384, 168)], fill=(90, 60, 30))
    for cx, cy, r in [(90, 330, 40), (200, 360, 50), (320, 340, 36), (470, 350, 44), (570, 320, 30)]:
        _ellipse(draw, cx, cy, r * 1.25, r, fill=(240, 130, 30), outline=(190, 90, 20))
        draw.rectangle([cx - 4, cy - r - 12, cx + 4, cy - r + 2], fill=(80, 100, 40))
    # The jack-o'-lantern glows.
    draw.polygon([(180, 340), (192, 325), (204, 340)], fill=(255, 230, 90))
    draw.polygon([(210, 340), (222, 325), (234, 340)], fill=(255, 230, 90))
    draw.chord([170, 350, 240, 390], 0, 180, fill=(255, 230, 90))
    for n in range(14):
        x, y = 30 + (n * 97) % 600, 20 + (n * 53) % 220
        _ellipse(draw, x, y, 9, 5, fill=(200, 120 + (n % 3) * 30, 30))


def bridge(draw):
    _sky(draw, (190, 220, 245), (235, 240, 245), 240)
    draw.rectangle([0, 240, WIDTH, HEIGHT - BANNER], fill=(90, 140, 70))
    draw.polygon([(0, 406), (220, 300), (420, 300), (640, 406)], fill=(70, 120, 180))
    for cx, cy, colour in [
        (60, 180, (210, 60, 30)),
        (130, 150, (235, 120, 30)),
        (520, 160, (200, 50, 40)),
        (590, 190, (240, 150, 40)),
        (470, 200, (220, 90, 30)),
    ]:
        draw.rectangle([cx - 5, cy + 30, cx + 5, cy + 90], fill=(90, 60, 40))
        _ellipse(draw, cx, cy, 45, 50, fill=colour)
    draw.polygon([(170, 190), (320, 120), (470, 190)], fill=(90, 40, 30))
    draw.rectangle([190, 190, 450, 280], fill=(170, 40, 30))
    draw.rectangle([215, 210, 265, 280], fill=(40, 20, 15))
    for x in range(290, 440, 30):
        draw.rectangle([x, 215, x + 14, 235], fill=(60, 25, 20))
    draw.polygon([(215, 280), (160, 406), (20, 406), (190, 280)], fill=(170, 140, 100))


def lighthouse(draw):
    _sky(draw, (150, 200, 240), (225, 240, 250), 270)
    draw.rectangle([0, 270, WIDTH, HEIGHT - BANNER], fill=(40, 90, 150))
    draw.polygon([(300, 406), (360, 300), (520, 290), (600, 406)], fill=(60, 55, 55))
    draw.polygon([(410, 300), (425, 130), (465, 130), (480, 300)], fill=(250, 250, 250))
    draw.rectangle([418, 100, 472, 130], fill=(200, 40, 40))
    draw.polygon([(414, 100), (445, 76), (476, 100)], fill=(150, 30, 30))
    draw.polygon([(472, 112), (640, 70), (640, 150)], fill=(255, 245, 170))
    for n in range(6):
        y = 300 + n * 18
        draw.arc([n * 30 - 60, y, 360 + n * 20, y + 30], 200, 340, fill=(220, 235, 250), width=2)
    draw.polygon([(110, 300), (150, 230), (150, 300)], fill=(250, 250, 250))
    draw.polygon([(90, 304), (170, 304), (160, 316), (100, 316)], fill=(120, 70, 40))
    for cx, cy in [(120, 80), (200, 120), (290, 70)]:
        draw.arc([cx - 20, cy - 8, cx, cy + 8], 200, 340, fill=(40, 40, 40), width=3)
        draw.arc([cx, cy - 8, cx + 20, cy + 8], 200, 340, fill=(40, 40, 40), width=3)


def qc_blue(draw):
    draw.rectangle([0, 0, WIDTH, HEIGHT - BANNER], fill=(245, 245, 245))
    draw.rectangle([170, 60, 470, 360], fill=(255, 255, 255), outline=(200, 200, 200), width=3)
    draw.rectangle([200, 90, 440, 330], fill=(30, 80, 220))


def qc_circles(draw):
    draw.rectangle([0, 0, WIDTH, HEIGHT - BANNER], fill=(200, 200, 200))
    for cx in (160, 320, 480):
        _ellipse(draw, cx, 200, 60, 60, fill=(220, 30, 30))


DRAWINGS = {
    "cn-lotus": lotus,
    "cn-plum": plum,
    "cn-crane": crane,
    "cn-pine": pine,
    "am-eagle": eagle,
    "am-pumpkin": pumpkin,
    "am-bridge": bridge,
    "am-lighthouse": lighthouse,
    "qc-blue": qc_blue,
    "qc-circles": qc_circles,
}
