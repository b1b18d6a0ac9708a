"""Generated data sets for the mmdetection and mmsegmentation downstream tests.

``make_coco_set(root)`` writes a COCO-format detection set (``train/``, ``val/`` and their
``*.json`` annotations); ``make_segmentation_set(root)`` writes mmsegmentation's folder layout
(``img_dir/{train,val}/*.png`` with label maps of the same name in ``ann_dir/``). In both, each
image is noise with a few bright rectangles whose colour channel is their class, so tiny
networks learn something within a few iterations. The same arguments always give
byte-identical files (a seeded NumPy generator and PNG): both engines read the same pixels.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

#: Class names of both sets, in label order: the channel each class's rectangles brighten.
CLASSES = ("red", "green", "blue")


def _draw(
    rng: np.random.Generator, size: int, boxes: int
) -> tuple[np.ndarray, list[tuple[int, int, int, int, int]]]:
    """Noise with ``boxes`` rectangles: the pixels and ``(label, x, y, w, h)`` per rectangle."""
    pixels = rng.integers(0, 100, size=(size, size, 3))
    drawn = []
    for _ in range(boxes):
        label = int(rng.integers(len(CLASSES)))
        w, h = (int(v) for v in rng.integers(size // 4, size // 2 + 1, size=2))
        x, y = int(rng.integers(0, size - w + 1)), int(rng.integers(0, size - h + 1))
        pixels[y : y + h, x : x + w, label] += 130
        drawn.append((label, x, y, w, h))
    return pixels.clip(0, 255).astype(np.uint8), drawn


def make_coco_set(
    root: str | Path, train_images: int = 8, val_images: int = 4, size: int = 64, seed: int = 0
) -> Path:
    """Write ``root/{train,val}/*.png`` and ``root/{train,val}.json`` (COCO); return ``root``."""
    root = Path(root)
    rng = np.random.default_rng(seed)
    categories = [{"id": index + 1, "name": name} for index, name in enumerate(CLASSES)]
    for split, count in (("train", train_images), ("val", val_images)):
        (root / split).mkdir(parents=True, exist_ok=True)
        images, annotations = [], []
        for index in range(count):
            pixels, boxes = _draw(rng, size, boxes=int(rng.integers(1, 3)))
            name = f"{split}_{index:02d}.png"
            Image.fromarray(pixels, mode="RGB").save(root / split / name)
            images.append({"id": index + 1, "file_name": name, "width": size, "height": size})
            for label, x, y, w, h in boxes:
                annotations.append(
                    {
                        "id": len(annotations) + 1,
                        "image_id": index + 1,
                        "category_id": label + 1,
                        "bbox": [x, y, w, h],
                        "area": w * h,
                        "iscrowd": 0,
                    }
                )
        coco = {"images": images, "annotations": annotations, "categories": categories}
        (root / f"{split}.json").write_text(json.dumps(coco))
    return root


def make_segmentation_set(
    root: str | Path, train_images: int = 12, val_images: int = 4, size: int = 32, seed: int = 0
) -> Path:
    """Write ``root/img_dir/{train,val}/*.png`` and their label maps in ``root/ann_dir/``
    (background 0, a rectangle of class ``c`` is ``c + 1``); return ``root``."""
    root = Path(root)
    rng = np.random.default_rng(seed)
    for split, count in (("train", train_images), ("val", val_images)):
        for folder in ("img_dir", "ann_dir"):
            (root / folder / split).mkdir(parents=True, exist_ok=True)
        for index in range(count):
            pixels, boxes = _draw(rng, size, boxes=2)
            labels = np.zeros((size, size), dtype=np.uint8)
            for label, x, y, w, h in boxes:
                labels[y : y + h, x : x + w] = label + 1
            name = f"{split}_{index:02d}.png"
            Image.fromarray(pixels, mode="RGB").save(root / "img_dir" / split / name)
            Image.fromarray(labels, mode="L").save(root / "ann_dir" / split / name)
    return root
