"""Drawing 100 labelled boxes on a 1024x1024 image and getting it back, per image.

One iteration is what a detection visualizer does for each image: ``set_image``,
``draw_bboxes`` (100 boxes), ``draw_texts`` (100 labels on a dark background box, as
MMDetection draws them), ``get_image``. Printed next to baselines measured in the same run:

- plain matplotlib, one artist per box and per label (``Rectangle`` + ``ax.text``), on an Agg
  figure reused between images, the way most hand-written visualization code does it;
- MMEngine's ``Visualizer``, when ``mmengine`` (and OpenCV) can be imported: in the hatch
  ``mmengine`` environment, with treadle-visual on the path.

    hatch run python benchmarks/visual_draw.py [--images 20] [--repeats 3]
    PYTHONPATH=packages/visual/src hatch run mmengine:python benchmarks/visual_draw.py
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from treadle.visual.visualizer import Visualizer

SIZE, BOXES = 1024, 100
LABEL_BOX = dict(facecolor="black", alpha=0.8, pad=0.7, edgecolor="none")


def make_scene(seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[str], list[tuple]]:
    rng = np.random.default_rng(seed)
    image = rng.integers(0, 256, (SIZE, SIZE, 3), dtype=np.uint8)
    corners = rng.uniform(0, SIZE - 160, (BOXES, 2))
    boxes = np.concatenate([corners, corners + rng.uniform(20, 150, (BOXES, 2))], axis=1)
    names = ["person", "car", "dog", "bicycle", "traffic light", "bus", "cat", "chair"]
    labels = [f"{names[i % len(names)]}: {rng.uniform(0.3, 1):.2f}" for i in range(BOXES)]
    palette = [tuple(int(c) for c in rng.integers(0, 256, 3)) for _ in range(BOXES)]
    return image, boxes, labels, palette


def treadle_draw(scene: tuple) -> Callable[[], np.ndarray]:
    image, boxes, labels, palette = scene
    vis = Visualizer(name="bench")

    def draw() -> np.ndarray:
        vis.set_image(image)
        vis.draw_bboxes(boxes, edge_colors=palette)
        vis.draw_texts(labels, boxes[:, :2], colors="white", bboxes=LABEL_BOX)
        return vis.get_image()

    return draw


def matplotlib_draw(scene: tuple) -> Callable[[], np.ndarray]:
    image, boxes, labels, palette = scene
    figure = Figure(frameon=False)
    canvas = FigureCanvasAgg(figure)
    dpi = figure.get_dpi()
    figure.set_size_inches((SIZE + 1e-2) / dpi, (SIZE + 1e-2) / dpi)
    axes = figure.add_axes((0, 0, 1, 1))
    colors = [tuple(c / 255 for c in color) for color in palette]

    def draw() -> np.ndarray:
        axes.cla()
        axes.set_axis_off()
        axes.imshow(image, extent=(0, SIZE, SIZE, 0), interpolation="none")
        for (x1, y1, x2, y2), color, label in zip(boxes.tolist(), colors, labels, strict=True):
            axes.add_patch(
                Rectangle(
                    (x1, y1), x2 - x1, y2 - y1, fill=False, edgecolor=color, linewidth=2, alpha=0.8
                )
            )
            axes.text(x1, y1, label, color="white", size=11, va="top", bbox=LABEL_BOX)
        canvas.draw()
        return np.asarray(canvas.buffer_rgba())[..., :3].copy()

    return draw


def mmengine_draw(scene: tuple) -> Callable[[], np.ndarray] | None:
    try:
        from mmengine.visualization import Visualizer as MMEngineVisualizer
    except ImportError:
        return None
    image, boxes, labels, palette = scene
    vis = MMEngineVisualizer(name="bench_mmengine")

    def draw() -> np.ndarray:
        vis.set_image(image)
        vis.draw_bboxes(boxes, edge_colors=palette)
        vis.draw_texts(labels, boxes[:, :2], colors="white", bboxes=LABEL_BOX)
        return vis.get_image()

    return draw


def per_image(draw: Callable[[], np.ndarray], images: int, repeats: int) -> float:
    draw()  # warm caches (fonts, glyphs) once, as a long run would
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(images):
            draw()
        best = min(best, (time.perf_counter() - start) / images)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    scene = make_scene()
    ours = per_image(treadle_draw(scene), args.images, args.repeats)
    print(
        f"{BOXES} boxes + {BOXES} labels on {SIZE}x{SIZE}, get_image(); best of "
        f"{args.repeats} x {args.images} images"
    )
    print(f"{'treadle Visualizer':<40} {ours * 1e3:8.1f} ms/image  (budget 100 ms)")
    baselines = [
        ("matplotlib, one artist per item", matplotlib_draw(scene)),
        ("MMEngine 0.10 Visualizer", mmengine_draw(scene)),
    ]
    for label, draw in baselines:
        if draw is None:
            print(f"{label:<40} (mmengine not importable: see this script's docstring)")
            continue
        theirs = per_image(draw, args.images, args.repeats)
        print(
            f"{label:<40} {theirs * 1e3:8.1f} ms/image  (treadle is {theirs / ours:.1f} x faster)"
        )


if __name__ == "__main__":
    main()
