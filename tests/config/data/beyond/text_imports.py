import os
from os.path import join

# stdlib imports keep a config text-style; modules and functions do not become keys
path = join('a', 'b')
sep = os.sep
