"""The matplotlib Agg figure the Visualizer draws on, sized so that 1 figure pixel = 1 image pixel.

Why it is fast (100 labelled boxes on a 1024x1024 image in a few tens of milliseconds, where
``imshow`` plus one matplotlib ``Text`` per label costs several times that):

- The figure is made once and reused; ``set_image`` resizes it and removes the previous
  drawings instead of clearing the axes (``cla`` alone costs ~15 ms).
- The image is not an ``imshow`` (which resamples it through an affine transform): a small
  artist blits it into the Agg buffer unchanged, so untouched pixels come back exactly.
- Drawings are added as artists but nothing is rendered until ``render`` (``get_image``);
  the Agg buffer then serves later calls until the next drawing.
- Each drawing gets the next z-order, so later calls paint over earlier ones whatever their
  artist type (matplotlib would otherwise put every text above every box).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


class ImageBlit(Artist):
    """Paints an RGB uint8 image into the renderer's buffer at (0, 0), pixel for pixel."""

    def __init__(self) -> None:
        super().__init__()
        self._rgba = np.zeros((0, 0, 4), dtype=np.uint8)

    def set_image(self, image: np.ndarray) -> None:
        height, width = image.shape[:2]
        if self._rgba.shape[:2] != (height, width):
            # Kept between images of one size: filling a fresh 4 MB buffer costs page faults.
            self._rgba = np.empty((height, width, 4), dtype=np.uint8)
            self._rgba[..., 3] = 255
        self._rgba[..., :3] = image[::-1]  # Agg's draw_image takes rows bottom-up
        self.stale = True

    def draw(self, renderer: Any) -> None:
        gc = renderer.new_gc()
        renderer.draw_image(gc, 0, 0, self._rgba)
        gc.restore()


class Canvas:
    """A reusable Agg figure whose single axes maps data (x, y) to image pixel (x, y).

    Example:
        >>> canvas = Canvas(dict(frameon=False))
        >>> canvas.set_image(np.zeros((20, 30, 3), dtype=np.uint8))
        >>> canvas.render().shape
        (20, 30, 3)
    """

    def __init__(self, fig_cfg: dict) -> None:
        self.figure = Figure(**fig_cfg)
        self.agg = FigureCanvasAgg(self.figure)
        self.axes = self.figure.add_axes((0, 0, 1, 1))
        self.axes.set_axis_off()
        self.axes.autoscale(False)
        self.dpi = float(self.figure.get_dpi())
        self.image: np.ndarray | None = None
        self._drawn: list[Artist] = []
        self._background = ImageBlit()
        self._background.set_zorder(-1)  # under every drawing
        self.axes.add_artist(self._background)
        # Whether the Agg buffer holds the current drawings (it is the cache of render()).
        self._rendered = False
        # Whether the axes were handed out for drawing on directly (MMEngine's ``ax_save``):
        # render() must then draw the figure, and set_image() remove what was drawn there.
        self._handed_out = False

    @property
    def width(self) -> int:
        return 0 if self.image is None else self.image.shape[1]

    @property
    def height(self) -> int:
        return 0 if self.image is None else self.image.shape[0]

    def axes_for_direct_drawing(self) -> Any:
        """The axes, for a caller that draws on them with matplotlib itself (toolboxes call
        ``visualizer.ax_save.text(...)``); the next render() draws whatever they added."""
        self._handed_out = True
        self._rendered = False
        return self.axes

    def _remove_direct_drawings(self) -> None:
        if not self._handed_out:
            return
        ours = {id(self._background), *map(id, self._drawn)}
        axes = self.axes
        for artist in [
            *axes.texts,
            *axes.lines,
            *axes.patches,
            *axes.collections,
            *axes.images,
            *axes.artists,
        ]:
            if id(artist) not in ours:
                artist.remove()
        self._handed_out = False

    def set_image(self, image: np.ndarray) -> None:
        """Start over on ``image`` (RGB uint8, checked by the caller): previous drawings go."""
        self._remove_direct_drawings()
        for artist in self._drawn:
            artist.remove()
        self._drawn.clear()
        height, width = image.shape[:2]
        if (width, height) != (self.width, self.height):
            # The 1e-2 keeps int(inches * dpi) from rounding down to one pixel less.
            self.figure.set_size_inches((width + 1e-2) / self.dpi, (height + 1e-2) / self.dpi)
            self.axes.set_xlim(0, width)
            self.axes.set_ylim(height, 0)  # y grows downwards, as in the image
        self.replace_background(image)

    def replace_background(self, image: np.ndarray) -> None:
        """Swap the image under the drawings (``draw_binary_masks`` blends into it)."""
        self.image = image.copy()  # the caller may reuse their array
        self._background.set_image(image)
        self._rendered = False

    def add(self, artist: Artist) -> None:
        """Put ``artist`` (in data coordinates unless it says otherwise) above everything."""
        artist.set_zorder(len(self._drawn) + 1)
        self.axes.add_artist(artist)
        self._drawn.append(artist)
        self._rendered = False

    def render(self) -> np.ndarray:
        """The image with every drawing on it, RGB uint8 (H, W, 3); a new array each call."""
        if self.image is None:
            raise RuntimeError("no image to draw on: call set_image(image) first")
        if not self._drawn and not self._handed_out:
            return self.image.copy()
        if not self._rendered:
            self.agg.draw()
            self._rendered = True
        return np.asarray(self.agg.buffer_rgba())[..., :3].copy()

    def close(self) -> None:
        """Drop the image and the drawings (the figure is not in pyplot, so GC frees it)."""
        self._remove_direct_drawings()
        for artist in self._drawn:
            artist.remove()
        self._drawn.clear()
        self.image = None
        self._rendered = False
