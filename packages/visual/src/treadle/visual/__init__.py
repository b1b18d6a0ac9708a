"""treadle.visual: the Visualizer and tracker backends (TensorBoard, Aim, MLflow, W&B, ...)."""

__version__ = "0.1.0"
