"""Where the checkout, the test fixtures and the golden files are."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
FIXTURES = TESTS / "fixtures"
GOLDEN = TESTS / "golden"

# Every importable TFLite / ONNX fixture (the `unsupported_*` ones are meant to be rejected).
FIXTURE_MODELS = sorted(p for d in ("models", "executor") for p in (FIXTURES / d).glob("*")
                        if p.suffix in (".tflite", ".onnx") and not p.name.startswith("unsupported_"))
