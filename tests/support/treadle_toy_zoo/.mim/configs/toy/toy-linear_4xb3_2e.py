_base_ = ["../_base_/toy_model.py", "../_base_/toy_schedule.py"]
test_dataloader = dict(collate_fn=dict(type="toy_zoo_collate", tag="from-config"))
