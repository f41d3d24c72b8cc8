"""Marks for single parameters of otherwise quick tests."""

import pytest
from hypothesis import HealthCheck, given, settings

# The full MobileNetV2-0.35 (144x144): seconds per plan in the fused executor and in C.
SLOW_FIXTURES = {"mbv2_035.tflite"}


def slow_fixtures(paths, fast=None):
    """Fixture-model parameters, the slow ones marked `slow`; with `fast` (names), also every one
    not in it (a test that keeps a covering subset in the fast tier)."""
    return [pytest.param(p, marks=pytest.mark.slow) if p.name in SLOW_FIXTURES or (fast is not None and p.name not in fast)
            else p for p in paths]


def split_examples(check, fast: int, slow: int, *strategies):
    """Two hypothesis tests of `check` on `strategies`: `fast` examples in the fast tier and `slow`
    more marked `slow`, so the full suite runs as many as one test of fast + slow examples did.
    Bind them to two names starting with test_."""
    def tier(examples):
        return settings(max_examples=examples, deadline=None,
                        suppress_health_check=[HealthCheck.too_slow])(given(*strategies)(check))
    return tier(fast), pytest.mark.slow(tier(slow))
