"""Generated images in mmpretrain's CustomDataset folder layout, for the downstream tests.

``make_image_folders(root)`` writes ``root/train/<class>/*.png`` and ``root/val/<class>/*.png``:
small RGB images whose class is the colour channel that dominates (plus noise), so a tiny
network learns them within a few epochs and the validation accuracy moves.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

CLASSES = ("red", "green", "blue")


def make_image_folders(
    root: str | Path,
    train_per_class: int = 8,
    val_per_class: int = 4,
    size: int = 16,
    seed: int = 0,
) -> Path:
    """Write the train and val folders under ``root`` and return ``root``.

    The same arguments always give byte-identical files (a seeded NumPy generator and PNG),
    so the MMEngine and treadle runs of a test read the same pixels.

    Example:
        >>> root = make_image_folders("/tmp/imgs")  # doctest: +SKIP
        >>> sorted(p.name for p in (root / "train").iterdir())  # doctest: +SKIP
        ['blue', 'green', 'red']
    """
    root = Path(root)
    rng = np.random.default_rng(seed)
    for split, count in (("train", train_per_class), ("val", val_per_class)):
        for label, name in enumerate(CLASSES):
            folder = root / split / name
            folder.mkdir(parents=True, exist_ok=True)
            for index in range(count):
                pixels = rng.integers(0, 120, size=(size, size, 3))
                # The class colour is brighter on a random half of the image or more, so the
                # classes overlap a little and accuracy is not 100% from the first epoch.
                rows = int(rng.integers(size // 2, size + 1))
                pixels[:rows, :, label] += 100
                image = Image.fromarray(pixels.clip(0, 255).astype(np.uint8), mode="RGB")
                image.save(folder / f"{name}_{index:02d}.png")
    return root
