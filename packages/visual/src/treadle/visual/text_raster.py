"""Rasterize label text from a cache of glyph bitmaps.

matplotlib lays out and renders every glyph of every ``Text`` on each draw (about 1 ms per
short label); detection labels repeat the same few dozen characters, so each character is
rendered once per font and size through FreeType (matplotlib's ``FT2Font``) and labels are
assembled from the cached bitmaps with the font's advances and kerning. Spacing can differ
from matplotlib's by a pixel or so per word; the glyphs themselves are the same.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from matplotlib import ft2font
from matplotlib.backends.backend_agg import get_hinting_flag
from matplotlib.font_manager import FontProperties, findfont, get_font

# matplotlib's Text spaces lines by 1.2 times the height of "lp".
LINE_SPACING = 1.2
_KERNING_DEFAULT = getattr(getattr(ft2font, "Kerning", None), "DEFAULT", 0)


@dataclass(frozen=True)
class Glyph:
    bitmap: np.ndarray  # coverage 0-255, rows top-down
    left: int  # from the pen position to the bitmap's first column
    top: int  # from the baseline up to the bitmap's first row
    advance: float
    index: int  # glyph index, for kerning


@dataclass(frozen=True)
class TextMask:
    """A rendered text: ``mask`` is coverage (0-255) of shape (h, w)."""

    mask: np.ndarray
    ascent: int  # rows from the top of ``mask`` to the first line's baseline
    descent: int  # rows from the last line's baseline to the bottom of ``mask``


class GlyphFont:
    """One font file at one size, with its glyph cache.

    Example:
        >>> font = GlyphFont.for_family('sans-serif', 11, 100)
        >>> font.render('cat 0.9').mask.dtype
        dtype('uint8')
    """

    def __init__(self, path: str, size_points: float, dpi: float) -> None:
        self._path = path
        self._size = size_points
        self._dpi = dpi
        self._flags = get_hinting_flag()
        self._glyphs: dict[str, Glyph] = {}
        letter_l, letter_p = self._glyph("l"), self._glyph("p")
        # As matplotlib does, lines are at least as tall as "lp", so labels line up.
        self.line_ascent = letter_l.top
        self.line_descent = max(letter_p.bitmap.shape[0] - letter_p.top, 0)

    @staticmethod
    @functools.lru_cache(maxsize=64)
    def for_family(family: str, size_points: float, dpi: float) -> GlyphFont:
        """The cached GlyphFont for a generic family name ('sans-serif') or a font name."""
        path = findfont(FontProperties(family=[family], size=size_points))
        return GlyphFont(path, size_points, dpi)

    def _font(self) -> ft2font.FT2Font:
        # matplotlib shares one FT2Font per file, and its renderers change the size: set ours.
        font = get_font(self._path)
        font.clear()
        font.set_size(self._size, self._dpi)
        return font

    def _glyph(self, char: str) -> Glyph:
        glyph = self._glyphs.get(char)
        if glyph is None:
            font = self._font()
            font.set_text(char, 0.0, flags=self._flags)
            font.draw_glyphs_to_bitmap(antialiased=True)
            # FT2Font pads the bitmap by one row above and below the glyph's box.
            bitmap = np.array(font.get_image())[1:-1]
            loaded = font.load_char(ord(char), flags=self._flags)
            glyph = Glyph(
                bitmap=bitmap,
                left=math.floor(loaded.bbox[0] / 64),
                top=round(loaded.bbox[3] / 64),
                advance=loaded.horiAdvance / 64,
                index=font.get_char_index(ord(char)),
            )
            self._glyphs[char] = glyph
        return glyph

    def has_glyphs(self, text: str) -> bool:
        """Whether the font draws every character of ``text`` (else matplotlib should)."""
        font = None
        for char in set(text) - self._glyphs.keys() - {"\n"}:
            font = font or self._font()
            if font.get_char_index(ord(char)) == 0:
                return False
        return True

    def render(self, text: str, align: str = "left") -> TextMask:
        """Coverage mask of ``text``; lines are aligned 'left', 'center' or 'right'."""
        lines = [self._line(line) for line in text.split("\n")]
        step = round((self.line_ascent + self.line_descent) * LINE_SPACING)
        first_ascent = max([self.line_ascent] + [top for _, _, top, _ in lines[:1]])
        last_descent = max([self.line_descent] + [bottom for _, _, _, bottom in lines[-1:]])
        height = first_ascent + step * (len(lines) - 1) + last_descent
        width = max(1, max(line_width for _, line_width, _, _ in lines))
        mask = np.zeros((height, width), dtype=np.uint8)
        for number, (placed, line_width, _, _) in enumerate(lines):
            baseline = first_ascent + number * step
            shift = {"left": 0, "center": (width - line_width) // 2}.get(align, width - line_width)
            for glyph, pen in placed:
                _stamp_max(mask, glyph.bitmap, baseline - glyph.top, pen + glyph.left + shift)
        return TextMask(mask, first_ascent, last_descent)

    def _line(self, line: str) -> tuple[list[tuple[Glyph, int]], int, int, int]:
        """Glyphs with their pen positions, the line's width, ascent and descent."""
        placed, pen, previous = [], 0.0, None
        font = None
        ascent = descent = 0
        for char in line:
            glyph = self._glyph(char)
            if previous is not None and glyph.index and previous.index:
                font = font or self._font()
                pen += font.get_kerning(previous.index, glyph.index, _KERNING_DEFAULT) / 64
            placed.append((glyph, round(pen)))
            ascent = max(ascent, glyph.top)
            descent = max(descent, glyph.bitmap.shape[0] - glyph.top)
            pen += glyph.advance
            previous = glyph
        ink_left = min((p + g.left for g, p in placed), default=0)
        if ink_left < 0:  # a first glyph that reaches left of the pen ('T', 'j'): keep it all
            placed = [(g, p - ink_left) for g, p in placed]
            pen -= ink_left
        ink_right = max((p + g.left + g.bitmap.shape[1] for g, p in placed), default=0)
        return placed, max(round(pen), ink_right), ascent, descent


def _stamp_max(mask: np.ndarray, bitmap: np.ndarray, row: int, col: int) -> None:
    """``mask[row:, col:] = max(mask, bitmap)``, cut to the mask's bounds."""
    height, width = bitmap.shape
    r0, c0 = max(row, 0), max(col, 0)
    r1, c1 = min(row + height, mask.shape[0]), min(col + width, mask.shape[1])
    if r0 < r1 and c0 < c1:
        target = mask[r0:r1, c0:c1]
        np.maximum(target, bitmap[r0 - row : r1 - row, c0 - col : c1 - col], out=target)
