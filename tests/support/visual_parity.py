"""What the tests/visual/test_mmengine_parity_*.py files share to compare treadle.visual with
MMEngine 0.10.7's mmengine.visualization: what a ported user observes.

Run where MMEngine is installed (``hatch run mmengine:parity``, or ``hatch run mmengine:pytest
tests/visual/test_mmengine_parity_*.py``); skipped elsewhere. Every scenario makes the same
calls on both libraries:

- drawing (``_draw``, ``_text``, ``_draw_order``): the images ``get_image()`` returns look alike
  (the helpers below say how closely); ``draw_featmap`` (``_featmap``) gives the same shapes and
  the same normalised maps;
- bad input (``_errors``, ``_input_deviations``, ``_out_of_image``): both refuse it. MMEngine
  mostly validates with ``assert`` (AssertionError, and no check at all under ``python -O``);
  treadle raises ValueError/TypeError naming the argument, as the issue asks. Each row of
  ``BOTH_REFUSE`` records the exception type of each library;
- LocalVisBackend (``_local_backend``, ``_local_backend_deviations``) and the Visualizer
  (``_visualizer``): the same files with the same content, the same names, backends and
  instances.

Where treadle deliberately behaves differently the difference is asserted, never skipped: the
tests named ``test_deviation_*`` and the rows of ``DEVIATIONS`` each say why, and where treadle
documents it.

Drawings are compared as a user looks at them, not byte for byte: both libraries rasterise with
matplotlib's Agg, but treadle batches shapes into collections and stamps texts from cached glyph
bitmaps, so anti-aliased edges and glyph spacing may differ by a pixel. ``assert_drawn_alike``
therefore checks that the changed pixels of one image lie within ``reach`` pixels of those of
the other, and that the two images differ little on average and strongly almost nowhere.

Feature maps are compared through their normalised levels: MMEngine colours with OpenCV's JET,
treadle with matplotlib's (a documented difference), so each image is mapped back to the level
(0-255) of its own colormap before comparing.

The module imports mmengine, so each test file imports it only after
``pytest.importorskip("mmengine")``.
"""

from __future__ import annotations

import itertools
import json
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2  # installed with MMEngine
import mmengine.visualization as mm_visual
import numpy as np
import torch
from matplotlib import colormaps
from PIL import Image

import treadle.visual as tr_visual

LIBRARIES = {"mmengine": mm_visual, "treadle": tr_visual}

_names = itertools.count()


def unique_name(prefix: str = "parity") -> str:
    """A Visualizer name not used before in this process (ManagerMixin keeps every name)."""
    return f"{prefix}_{next(_names)}"


# -- outcomes ------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What a call did: its result or the type of what it raised, and the warnings it gave."""

    result: Any = None
    raised: type[BaseException] | None = None
    message: str = ""
    warnings: tuple[tuple[type[Warning], str], ...] = ()

    @property
    def kind(self) -> str | type[BaseException]:
        """'ok', or the exception type."""
        return "ok" if self.raised is None else self.raised

    def warned(self, category: type[Warning] = UserWarning) -> int:
        """How many warnings of ``category`` the call gave."""
        return sum(issubclass(cat, category) for cat, _ in self.warnings)


def outcome(call: Callable[[], Any]) -> Outcome:
    """Run ``call``, recording its warnings and catching any exception."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = call()
        except Exception as error:
            return Outcome(raised=type(error), message=str(error), warnings=_warning_list(caught))
    return Outcome(result=result, warnings=_warning_list(caught))


def _warning_list(caught: list) -> tuple[tuple[type[Warning], str], ...]:
    return tuple((item.category, str(item.message)) for item in caught)


# -- drawings ------------------------------------------------------------------------------


def gradient_image(height: int, width: int) -> np.ndarray:
    """A smooth RGB uint8 background, so that no drawing colour matches it by accident."""
    ys, xs = np.mgrid[0:height, 0:width]
    image = np.stack(
        [
            40 + 120 * xs / max(width - 1, 1),
            50 + 100 * ys / max(height - 1, 1),
            np.full_like(xs, 90),
        ],
        axis=-1,
    )
    return np.round(image).astype(np.uint8)


def changed(image: np.ndarray, background: np.ndarray) -> np.ndarray:
    """Boolean (H, W): the pixels a drawing changed."""
    return (image != background).any(axis=-1)


def dilate(mask: np.ndarray, reach: int) -> np.ndarray:
    """``mask`` grown by ``reach`` pixels in every direction (a square neighbourhood)."""
    grown = mask.copy()
    height, width = mask.shape
    padded = np.pad(mask, reach)
    for dy in range(-reach, reach + 1):
        for dx in range(-reach, reach + 1):
            grown |= padded[reach + dy : reach + dy + height, reach + dx : reach + dx + width]
    return grown


@dataclass
class DrawingDifference:
    mean_abs: float  # mean |difference| over every pixel and channel
    strong: float  # fraction of pixels differing by more than 64 in some channel
    changed_mm: int
    changed_tr: int
    covered_mm: float  # fraction of MMEngine's changed pixels near a changed treadle pixel
    covered_tr: float  # and the other way round

    def __str__(self) -> str:
        return (
            f"mean |diff| {self.mean_abs:.3f}, strongly different {self.strong:.4f}, changed "
            f"pixels MMEngine {self.changed_mm} / treadle {self.changed_tr}, covered "
            f"{self.covered_mm:.3f} / {self.covered_tr:.3f}"
        )


def drawing_difference(
    mm: np.ndarray, tr: np.ndarray, background: np.ndarray, reach: int = 1
) -> DrawingDifference:
    diff = np.abs(mm.astype(np.int16) - tr.astype(np.int16))
    changed_mm, changed_tr = changed(mm, background), changed(tr, background)

    def covered(mask: np.ndarray, other: np.ndarray) -> float:
        return float((mask & dilate(other, reach)).sum() / mask.sum()) if mask.any() else 1.0

    return DrawingDifference(
        mean_abs=float(diff.mean()),
        strong=float((diff.max(axis=-1) > 64).mean()),
        changed_mm=int(changed_mm.sum()),
        changed_tr=int(changed_tr.sum()),
        covered_mm=covered(changed_mm, changed_tr),
        covered_tr=covered(changed_tr, changed_mm),
    )


def assert_drawn_alike(
    mm: np.ndarray,
    tr: np.ndarray,
    background: np.ndarray,
    *,
    mean_abs: float = 1.5,
    strong: float = 0.02,
    coverage: float = 0.95,
    reach: int = 1,
) -> DrawingDifference:
    """The same picture up to anti-aliasing and one-pixel glyph placement."""
    assert mm.shape == tr.shape == background.shape, (mm.shape, tr.shape)
    assert mm.dtype == tr.dtype == np.uint8, (mm.dtype, tr.dtype)
    difference = drawing_difference(mm, tr, background, reach)
    assert difference.changed_mm > 0 and difference.changed_tr > 0, f"nothing drawn: {difference}"
    assert difference.mean_abs <= mean_abs, str(difference)
    assert difference.strong <= strong, str(difference)
    assert difference.covered_mm >= coverage, str(difference)
    assert difference.covered_tr >= coverage, str(difference)
    # Neither draws much more than the other (thicker lines, a bigger font).
    ratio = difference.changed_tr / difference.changed_mm
    assert 0.8 <= ratio <= 1.25, str(difference)
    return difference


# -- feature maps ------------------------------------------------------------------------------


def opencv_jet() -> np.ndarray:
    """(256, 3) RGB of OpenCV's COLORMAP_JET, which MMEngine's draw_featmap uses."""
    levels = np.arange(256, dtype=np.uint8)[None]
    return cv2.cvtColor(cv2.applyColorMap(levels, cv2.COLORMAP_JET), cv2.COLOR_BGR2RGB)[0]


def matplotlib_jet() -> np.ndarray:
    """(256, 3) RGB of matplotlib's 'jet', which treadle's draw_featmap uses."""
    return np.round(colormaps["jet"](np.arange(256))[:, :3] * 255).astype(np.uint8)


def jet_levels(image: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """(H, W) level 0-255 whose colour in ``lut`` is nearest each pixel of ``image``."""
    distances = ((image[..., None, :].astype(np.int32) - lut.astype(np.int32)) ** 2).sum(-1)
    return distances.argmin(axis=-1)


def in_lut(image: np.ndarray, lut: np.ndarray) -> bool:
    """Whether every pixel of ``image`` is exactly one of the colours of ``lut``."""
    pixels = image.reshape(-1, 1, 3).astype(np.int32)
    return bool((pixels == lut[None].astype(np.int32)).all(-1).any(-1).all())


# -- files -------------------------------------------------------------------------------------


def files_under(root: str | os.PathLike) -> list[str]:
    """Every file under ``root``, as sorted POSIX paths relative to it."""
    root = Path(root)
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file())


def read_png(path: str | os.PathLike) -> np.ndarray:
    """A PNG's pixels as RGB uint8, read with Pillow (neither library under test writes it)."""
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


# -- visualizers and the inputs several files draw -----------------------------------------------

BACKGROUND = gradient_image(120, 160)


def new_visualizer(visual: Any, image: Any = None, **kwargs: Any) -> Any:
    """A Visualizer of ``visual`` (mm_visual or tr_visual) under a name not used before."""
    return visual.Visualizer(name=unique_name(), image=image, **kwargs)


def drawn(visual: Any, draw: Callable[[Any], Any], image: Any = BACKGROUND) -> np.ndarray:
    """``get_image()`` after ``draw(visualizer)`` on ``image``; out-of-image warnings muted."""
    visualizer = new_visualizer(visual, image)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        draw(visualizer)
    return visualizer.get_image()


def drawn_by_both(
    draw: Callable[[Any], Any], image: Any = BACKGROUND
) -> tuple[np.ndarray, np.ndarray]:
    """``drawn`` by MMEngine, then by treadle."""
    return drawn(mm_visual, draw, image), drawn(tr_visual, draw, image)


def box_mask(
    top: int, left: int, height: int, width: int, shape: tuple[int, ...] = BACKGROUND.shape[:2]
) -> np.ndarray:
    """A bool mask of ``shape``, True in one rectangle."""
    mask = np.zeros(shape, dtype=bool)
    mask[top : top + height, left : left + width] = True
    return mask


def array(rows: Any) -> np.ndarray:
    """``rows`` as a float64 array, the coordinates' usual form."""
    return np.array(rows, dtype=np.float64)


BOXES = array([[10, 10, 60, 50], [70, 20, 150, 110]])
PLAIN_LABEL_BOX = dict(facecolor="black", alpha=0.8, pad=0.7, edgecolor="none")  # MMDet's

FEATMAP = (
    torch.rand(6, 40, 48, generator=torch.Generator().manual_seed(0))
    + torch.arange(6.0).view(6, 1, 1) * 0.1
)
OVERLAY = gradient_image(40, 48)


# -- bad input ----------------------------------------------------------------------------------

MASK = box_mask(5, 5, 10, 10)
TWO = array([[1, 2, 3, 4], [5, 6, 7, 8]])
THREE = array([[1, 2, 3, 4], [5, 6, 7, 8], [1, 1, 9, 9]])
P3 = array([[1, 2], [3, 4], [5, 6]])


def on_image(draw: Callable[[Any], Any]) -> Callable[[Any], np.ndarray]:
    """A call that draws on a fresh visualizer (with the background image) and renders."""

    def call(visual: Any) -> np.ndarray:
        visualizer = new_visualizer(visual, BACKGROUND)
        draw(visualizer)
        return visualizer.get_image()

    return call


def featmap_call(**kwargs: Any) -> Callable[[Any], np.ndarray]:
    """A call of the static ``Visualizer.draw_featmap(**kwargs)`` of a library."""
    return lambda visual: visual.Visualizer.draw_featmap(**kwargs)


# -- LocalVisBackend ----------------------------------------------------------------------------

RGB = np.random.default_rng(1).integers(0, 256, (6, 7, 3), dtype=np.uint8)


def local_backend_run(visual: Any, save_dir: str | os.PathLike, calls: list[Callable]) -> Any:
    """A LocalVisBackend of ``visual`` in ``save_dir``, given each of ``calls``, then closed."""
    backend = visual.LocalVisBackend(save_dir=str(save_dir))
    for call in calls:
        call(backend)
    backend.close()
    return backend


def json_lines(path: Path) -> list[Any]:
    """The parsed lines of a JSON-lines file such as scalars.json."""
    return [json.loads(line) for line in path.read_text().splitlines()]
