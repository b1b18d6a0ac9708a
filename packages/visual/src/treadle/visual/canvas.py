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

Code written for MMEngine may also prepare the figure itself, as MMEngine's own ``set_image``
does (``ax_save.cla()``, ``ax_save.imshow(image)``, ``fig_save.set_size_inches(...)``), and then
draw with the Visualizer's methods: the axes handed out are then drawn on as they are, and the
next ``set_image`` puts the canvas back in order.
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
        self.dpi = float(self.figure.get_dpi())
        self.image: np.ndarray | None = None
        self._drawn: list[Artist] = []
        self._background = ImageBlit()
        self._background.set_zorder(-1)  # under every drawing
        self._set_up_axes()
        self._size: tuple[int, int] | None = None  # (width, height) the figure is set to
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

    @property
    def pixel_height(self) -> int:
        """Height of the rendered figure in pixels: the image's, or, on a figure the caller
        sized itself (``fig_save.set_size_inches``), the figure's."""
        if self.image is not None:
            return self.image.shape[0]
        return int(self.figure.bbox.height)

    def drawn_directly(self) -> bool:
        """Whether the caller prepared the figure itself (no ``set_image``, axes handed out)."""
        return self.image is None and self._handed_out

    def _set_up_axes(self) -> None:
        """Axes without decorations or autoscaling, holding the background image: at start,
        and again after a caller cleared them (``ax_save.cla()`` drops every artist)."""
        self.axes.set_axis_off()
        self.axes.autoscale(False)
        self.axes.add_artist(self._background)

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
        if self._background.axes is not axes:  # the caller cleared the axes
            self._set_up_axes()
            self._size = None  # the limits went with them
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
        # Whether the caller may have resized the figure or moved the limits since.
        resized = self._handed_out
        self._remove_direct_drawings()
        self._remove_drawings()
        height, width = image.shape[:2]
        if resized or (width, height) != self._size:
            # The 1e-2 keeps int(inches * dpi) from rounding down to one pixel less.
            self.figure.set_size_inches((width + 1e-2) / self.dpi, (height + 1e-2) / self.dpi)
            self.axes.set_xlim(0, width)
            self.axes.set_ylim(height, 0)  # y grows downwards, as in the image
            self._size = (width, height)
        self.replace_background(image)

    def _remove_drawings(self) -> None:
        for artist in self._drawn:
            if artist.axes is self.axes:  # a cleared axes (cla) has dropped it already
                artist.remove()
        self._drawn.clear()

    def replace_background(self, image: np.ndarray) -> None:
        """Swap the image under the drawings (``draw_binary_masks`` blends into it)."""
        self.image = image.copy()  # the caller may reuse their array
        self._background.set_image(image)
        self._rendered = False

    def add(self, artist: Artist) -> None:
        """Put ``artist`` (in data coordinates unless it says otherwise) above everything."""
        if self._drawn and self._drawn[0].axes is not self.axes:
            # The caller cleared the axes (``ax_save.cla()``): forget what went with them.
            self._drawn = [drawn for drawn in self._drawn if drawn.axes is self.axes]
        artist.set_zorder(len(self._drawn) + 1)
        self.axes.add_artist(artist)
        self._drawn.append(artist)
        self._rendered = False

    def render(self) -> np.ndarray:
        """The image with every drawing on it, RGB uint8 (H, W, 3); a new array each call."""
        if self.image is None:
            if not self._handed_out:
                raise RuntimeError("no image to draw on: call set_image(image) first")
            # A figure the caller prepared itself: render it as it is.
            self.agg.draw()
            return np.asarray(self.agg.buffer_rgba())[..., :3].copy()
        if not self._drawn and not self._handed_out:
            return self.image.copy()
        if not self._rendered:
            self.agg.draw()
            self._rendered = True
        return np.asarray(self.agg.buffer_rgba())[..., :3].copy()

    def close(self) -> None:
        """Drop the image and the drawings (the figure is not in pyplot, so GC frees it)."""
        self._remove_direct_drawings()
        self._remove_drawings()
        self.image = None
        self._rendered = False
