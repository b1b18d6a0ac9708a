"""treadle.runner: the training engine: Runner, model, optim, hooks, loops, evaluator."""

__version__ = "0.1.0"
