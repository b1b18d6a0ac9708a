from lazypkg_demo.models import TinyNet
m = dict(type=TinyNet)
