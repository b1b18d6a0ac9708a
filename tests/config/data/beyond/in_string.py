_base_ = '../refs/base.py'
train_root = '{{_base_.dataset.root}}/train'
label = 'classes: {{_base_.num_classes}}'
