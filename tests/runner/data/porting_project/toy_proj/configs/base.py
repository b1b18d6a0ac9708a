default_scope = "mmengine"
