_base_ = ["../_base_/toy_model.py"]
