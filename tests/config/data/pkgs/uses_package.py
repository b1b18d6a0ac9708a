_base_ = ['cfgpkg_demo::base/runtime.py', 'cfgpkg_demo::models/net.py']
model = dict(depth=50)
