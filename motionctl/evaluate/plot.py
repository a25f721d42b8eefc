"""Small plots drawn with numpy alone, for the Preview panel's Compare box (a Blender image) and the
scoreboard's results (a PNG): one marker per engine, axes with numbered ticks, and a dashed line for
the source capture.  Pictures are RGBA float [H, W, 4] with rows top-down (``bottom_up`` flips them
for Blender images)."""

from __future__ import annotations

import numpy as np

from ..engines import ENGINES

# The colours engines are drawn in (``Engine.colour``), the same in the panel, the results and the README.
PALETTE = {"orange": (0.90, 0.45, 0.10), "purple": (0.55, 0.35, 0.80), "green": (0.20, 0.60, 0.30),
           "blue": (0.15, 0.45, 0.85), "pink": (0.85, 0.25, 0.45), "black": (0.10, 0.10, 0.10),
           "grey": (0.5, 0.5, 0.5)}
SOURCE = (0.75, 0.55, 0.0)


def colour_name(engine: str) -> str:
    """The colour an engine is drawn in (its registry line's; an unknown name: grey)."""
    return ENGINES[engine].colour if engine in ENGINES and ENGINES[engine].colour in PALETTE else "grey"


def colour(engine: str) -> tuple:
    """RGB of ``colour_name``."""
    return PALETTE[colour_name(engine)]

# 3 x 5 pixel digits and the few signs the ticks need.
GLYPHS = {
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111", "3": "111001111001111",
    "4": "101101111001001", "5": "111100111001111", "6": "111100111101111", "7": "111001010010010",
    "8": "111101111101111", "9": "111101111001111", ".": "000000000000010", "%": "101001010100101",
    "s": "000011110011110", "-": "000000111000000", " ": "000000000000000",
}


def _text(img, x: int, y: int, text: str, colour, size: int = 2) -> None:
    """Draw ``text`` with its top-left corner at pixel (x, y)."""
    for k, ch in enumerate(text):
        g = np.array([int(c) for c in GLYPHS.get(ch, GLYPHS[" "])], dtype=bool).reshape(5, 3)
        block = np.kron(g, np.ones((size, size), dtype=bool))
        x0 = x + k * 4 * size
        h, w = block.shape
        sub = img[max(y, 0):y + h, max(x0, 0):x0 + w]
        sub[block[:sub.shape[0], :sub.shape[1]], :3] = colour


def _tick_step(span: float) -> float:
    raw = span / 5
    mag = 10 ** np.floor(np.log10(raw))
    return float(min((1, 2, 2.5, 5, 10), key=lambda m: abs(m * mag - raw)) * mag)


def scatter(points, x_max: float, y_max: float, x_label: str = "%", y_label: str = "s", vline: float | None = None,
            width: int = 360, height: int = 240, x_scale: float = 100.0) -> np.ndarray:
    """RGBA [height, width, 4] (rows top-down): ``points`` [(x, y, colour, marker)] with marker
    "o" (disc), "s" (square) or "x" (a cross: y is off the top, i.e. never reached) on axes from 0 to ``x_max``
    and ``y_max``; tick labels show x times ``x_scale`` with ``x_label`` and y with ``y_label``;
    ``vline`` a dashed vertical line (the source capture)."""
    img = np.ones((height, width, 4), dtype=np.float32)
    left, right, top, bottom = 46, width - 12, 12, height - 30
    img[top:bottom + 1, left, :3] = 0.2
    img[bottom, left:right + 1, :3] = 0.2

    def px(x, y):
        return (left + (right - left) * min(max(x / x_max, 0.0), 1.0),
                bottom - (bottom - top) * min(max(y / y_max, 0.0), 1.0))

    xs = _tick_step(x_max * x_scale) / x_scale
    for t in np.arange(0, x_max + 1e-9, xs):
        u, _ = px(t, 0)
        img[bottom:bottom + 5, int(u), :3] = 0.2
        img[top:bottom, int(u), :3] = np.minimum(img[top:bottom, int(u), :3], 0.9)
        label = f"{t * x_scale:g}{x_label}"
        _text(img, int(u) - len(label) * 4, bottom + 9, label, (0.2, 0.2, 0.2))
    ys = _tick_step(y_max)
    for t in np.arange(0, y_max + 1e-9, ys):
        _, v = px(0, t)
        img[int(v), left - 5:left, :3] = 0.2
        img[int(v), left + 1:right, :3] = np.minimum(img[int(v), left + 1:right, :3], 0.9)
        label = f"{t:g}{y_label}"
        _text(img, left - 8 - len(label) * 8, int(v) - 5, label, (0.2, 0.2, 0.2))
    if vline is not None:
        u, _ = px(vline, 0)
        dash = np.arange(top, bottom) % 8 < 4
        img[np.arange(top, bottom)[dash], int(u), :3] = SOURCE
    yy, xx = np.mgrid[0:height, 0:width]
    for x, y, colour, marker in points:
        u, v = px(x, y if np.isfinite(y) else y_max)
        if marker == "x" or not np.isfinite(y):
            d1, d2 = np.abs((xx - u) - (yy - v)), np.abs((xx - u) + (yy - v))
            mask = ((d1 < 1.6) | (d2 < 1.6)) & (np.abs(xx - u) <= 6) & (np.abs(yy - v) <= 6)
        elif marker == "s":
            mask = (np.abs(xx - u) <= 5) & (np.abs(yy - v) <= 5)
            img[(np.abs(xx - u) <= 7) & (np.abs(yy - v) <= 7) & ~mask, :3] = 1.0
        else:
            mask = (xx - u) ** 2 + (yy - v) ** 2 <= 36
            img[((xx - u) ** 2 + (yy - v) ** 2 <= 56) & ~mask, :3] = 1.0
        img[mask, :3] = colour
    return img


def bottom_up(img: np.ndarray) -> np.ndarray:
    """The picture with its rows bottom-up (Blender images)."""
    return np.ascontiguousarray(img[::-1])


__all__ = ["PALETTE", "SOURCE", "bottom_up", "colour", "colour_name", "scatter"]
