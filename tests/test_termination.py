"""Every loop that grows a tree terminates: a split must make every child lighter than its
parent, and a tree that outgrows its node budget stops with a clear error."""

import subprocess
import sys
from typing import ClassVar

import attrs
import numpy as np
import pytest

from treekit_core import Propagator, Split, Splitter, TreeClassifier, hookimpl, registered


def test_c45_on_values_near_the_largest_float_splits_once_and_is_right():
    """The midpoint of 1e308 and 1.7e308 overflowed to inf: every row went left and the
    node split again forever. Runs in a subprocess so a regression fails instead of hanging."""
    code = (
        "from treekit_core import TreeClassifier\n"
        "m = TreeClassifier(splitter='c45', criterion='entropy')"
        ".fit([[1e308], [1.7e308]] * 10, [0, 1] * 10)\n"
        "print(m.get_n_leaves(), *m.predict([[1e308], [1.7e308]]).tolist())\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["2", "0", "1"]


@attrs.define(slots=False)
class EverythingLeft(Splitter):
    """A broken splitter: its threshold lies above every value."""

    name: ClassVar[str] = "everything_left"

    def find_split(self, state, node, rules):
        return Split(0, np.inf, 1.0)


@attrs.define(slots=False)
class BarelyShrinks(Propagator):
    """A runaway propagator: both children keep almost all of the parent's weight."""

    name: ClassVar[str] = "barely_shrinks"
    produces_fractional_weights: ClassVar[bool] = True

    def propagate(self, state, data, node, split):
        return [(node.rows, node.row_weights * 0.999), (node.rows, node.row_weights * 0.999)]


class Plugin:
    @hookimpl
    def treekit_splitters(self):
        return [EverythingLeft]

    @hookimpl
    def treekit_propagators(self):
        return [BarelyShrinks]


def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    return X, (X[:, 0] > 0).astype(int)


def test_a_split_that_does_not_shrink_its_children_makes_a_leaf():
    X, y = data()
    with registered(Plugin(), name="broken"):
        model = TreeClassifier(splitter="everything_left").fit(X, y)
    assert model.get_n_leaves() == 1


def test_a_runaway_composition_stops_at_the_node_budget_with_a_clear_error():
    X, y = data()
    with registered(Plugin(), name="broken"), pytest.raises(RuntimeError, match="outgrew"):
        TreeClassifier(propagator="barely_shrinks").fit(X, y)
