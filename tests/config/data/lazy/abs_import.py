import lazypkg_demo.models

net = dict(type=lazypkg_demo.models.TinyNet)
