from lazypkg_demo.models import TinyNet

model = dict(type=TinyNet, depth=18, head=dict(num_classes=10))
