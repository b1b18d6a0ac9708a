raise RuntimeError("config lookups must not import the package")
