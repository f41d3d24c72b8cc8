"""Marks for single parameters of otherwise quick tests."""

import pytest

# The full MobileNetV2-0.35 (144x144): seconds per plan in the fused executor and in C.
SLOW_FIXTURES = {"mbv2_035.tflite"}


def slow_fixtures(paths):
    """Fixture-model parameters, the slow ones marked `slow`."""
    return [pytest.param(p, marks=pytest.mark.slow) if p.name in SLOW_FIXTURES else p for p in paths]
