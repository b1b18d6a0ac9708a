"""treadle_toy_zoo: a tiny downstream package, laid out as MIM installs OpenMMLab packages, for
the tests of treadle.runner.hub and treadle.runner.infer (no downloads).

- ``registry.py``: child registries of scope ``treadle_toy_zoo`` (found by treadle's registries
  as ``<scope>.registry``, as MMEngine finds ``mmdet.registry``);
- ``models.py``: ToyZooClassifier (a linear layer, or two with ``hidden``), ToyZooDataset;
- ``inferencer.py``: ToyZooInferencer, a BaseInferencer subclass;
- ``weights.py``: the ``toyzoo://NAME`` checkpoint scheme the metafile's ``Weights`` use: it
  makes a state dict from a seed instead of downloading one;
- ``.mim/model-index.yml`` and ``.mim/configs/``: the configs and the metafile.

Importing the package registers the ``toyzoo://`` scheme.
"""

from . import weights  # noqa: F401  (registers the toyzoo:// checkpoint scheme)
