"""The root registries of treadle.visual: VISUALIZERS and VISBACKENDS.

They live here, next to what they hold, as DESIGN.md asks of root registries. Downstream
projects make children of them (``Registry('vis_backend', parent=VISBACKENDS, ...)``).
"""

from __future__ import annotations

from treadle.registry import Registry

# ``locations`` are imported on the first search, so ``VISBACKENDS.build(dict(type=...))``
# finds every built-in backend without the caller importing treadle.visual.backends first.
VISUALIZERS = Registry("visualizer", scope="treadle", locations=["treadle.visual.visualizer"])
VISBACKENDS = Registry("vis_backend", scope="treadle", locations=["treadle.visual.backends"])
