"""Small classes the registry tests register and build: treadle-registry's own tests (the tree
fixture of tests/registry/conftest.py) and the MMEngine parity suite use the same ones."""


class ResNet:
    def __init__(self, depth=50, stages=4):
        self.depth = depth
        self.stages = stages


class FasterRCNN:
    def __init__(self, backbone=None, num_classes=80):
        self.backbone = backbone
        self.num_classes = num_classes


class MobileNet:
    def __init__(self, width=1.0):
        self.width = width


class CascadeHead:
    def __init__(self, stages=3):
        self.stages = stages
