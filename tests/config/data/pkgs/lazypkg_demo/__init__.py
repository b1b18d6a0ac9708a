"""A tiny package that pure-Python test configs import lazily."""
