"""A downstream test file written against ``mmengine.testing`` (in the style of OpenMMLab
projects' hook tests), ported by renaming its imports only:

    from mmengine.hooks import Hook                  -> from treadle.runner.hooks import Hook
    from mmengine.registry import HOOKS              -> from treadle.runner.registry import HOOKS
    from mmengine.testing import RunnerTestCase, ... -> from treadle.runner.testing import ...

Nothing else in it was changed.
"""

import copy
import os

import torch
import torch.nn as nn

from treadle.runner.hooks import Hook
from treadle.runner.registry import HOOKS
from treadle.runner.testing import (
    RunnerTestCase,
    assert_allclose,
    assert_attrs_equal,
    assert_dict_contains_subset,
    assert_dict_has_keys,
    assert_is_norm_layer,
    assert_keys_equal,
    assert_params_all_zeros,
)


@HOOKS.register_module(force=True)
class CountItersHook(Hook):
    def __init__(self):
        self.train_iters = 0
        self.val_epochs = 0

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.train_iters += 1

    def after_val_epoch(self, runner, metrics=None):
        self.val_epochs += 1


class TestCountItersHook(RunnerTestCase):
    def test_epoch_based(self):
        cfg = copy.deepcopy(self.epoch_based_cfg)
        cfg.custom_hooks = [dict(type="CountItersHook")]
        runner = self.build_runner(cfg)
        runner.train()
        hook = next(h for h in runner.hooks if isinstance(h, CountItersHook))
        # 12 samples, batch size 3, 2 epochs; validated after each epoch.
        self.assertEqual(hook.train_iters, 8)
        self.assertEqual(hook.val_epochs, 2)
        self.assertTrue(assert_dict_has_keys(runner.message_hub.log_scalars, ["train/loss"]))

    def test_iter_based(self):
        cfg = copy.deepcopy(self.iter_based_cfg)
        cfg.custom_hooks = [dict(type="CountItersHook")]
        runner = self.build_runner(cfg)
        runner.train()
        hook = next(h for h in runner.hooks if isinstance(h, CountItersHook))
        self.assertEqual(hook.train_iters, 12)
        self.assertTrue(os.path.exists(os.path.join(self.temp_dir.name, "iter_12.pth")))

    def test_resume(self):
        cfg = copy.deepcopy(self.iter_based_cfg)
        runner = self.build_runner(cfg)
        runner.train()
        ckpt = os.path.join(self.temp_dir.name, "iter_12.pth")
        cfg = copy.deepcopy(self.iter_based_cfg)
        cfg.train_cfg.max_iters = 13
        cfg.load_from = ckpt
        cfg.resume = True
        runner = self.build_runner(cfg)
        runner.train()
        self.assertEqual(runner.iter, 13)

    def test_test(self):
        runner = self.build_runner(copy.deepcopy(self.epoch_based_cfg))
        metrics = runner.test()
        self.assertTrue(assert_dict_contains_subset(metrics, dict(acc=1)))

    def test_clear_work_dir(self):
        runner = self.build_runner(copy.deepcopy(self.epoch_based_cfg))
        runner.train()
        self.assertTrue(os.listdir(self.temp_dir.name))
        self.clear_work_dir()
        self.assertEqual(os.listdir(self.temp_dir.name), [])


class TestCompareHelpers(RunnerTestCase):
    def test_helpers(self):
        assert_allclose(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0]))
        with self.assertRaises(AssertionError):
            assert_allclose(torch.tensor([1.0]), torch.tensor([2.0]))
        self.assertTrue(assert_keys_equal(["a", "b"], ["b", "a"]))
        self.assertTrue(assert_attrs_equal(nn.Linear(2, 3), dict(in_features=2)))
        self.assertTrue(assert_is_norm_layer(nn.BatchNorm2d(2)))
        conv = nn.Conv2d(2, 2, 1)
        nn.init.constant_(conv.weight, 0)
        nn.init.constant_(conv.bias, 0)
        self.assertTrue(assert_params_all_zeros(conv))
