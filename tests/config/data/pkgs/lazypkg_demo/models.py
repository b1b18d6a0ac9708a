class TinyNet:
    def __init__(self, depth=1):
        self.depth = depth


def make_optimizer(lr):
    return {"lr": lr}
