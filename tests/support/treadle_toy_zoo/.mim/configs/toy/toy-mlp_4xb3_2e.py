_base_ = ["../_base_/toy_model.py", "../_base_/toy_schedule.py"]
model = dict(hidden=8, pretrained="toyzoo://never-loaded")
data_preprocessor = dict(type="BaseDataPreprocessor")
visualizer = dict(type="Visualizer", name="toy-zoo-vis")
