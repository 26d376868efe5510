"""The cmprsk 2.2-11 / survival 3.5.3 fixture of tests/fixtures/competing_risks (made by
its make_fixtures.R on the bundled mgus2, numbers with 17 digits), shared by the
competing-risk and delayed-entry tests."""

import json
from pathlib import Path

import numpy as np

REFERENCE = json.loads(
    (Path(__file__).parent / "fixtures" / "competing_risks" / "mgus2.json").read_text()
)


def numbers(values):
    """The fixture's numbers (written as text) as floats."""
    return np.array([float(v) for v in values])
