import numpy as np
import pytest

from treekit_core import TreeClassifier
from treekit_core.datasets import load_dataset
from treekit_core.estimators.pairwise_dag import PairwiseDAG
from treekit_core.tools.metrics import diagnostic_report


def test_diagnostic_figures_equal_hand_counts_with_abstentions():
    y_true = np.array(["sick", "sick", "sick", "well", "well", "well", "well", "sick"])
    y_pred = np.array(["sick", "well", "sick", "well", "sick", "well", "well", "sick"])
    abstained = np.array([False, False, False, False, False, False, True, True])
    report = diagnostic_report(y_true, y_pred, abstained, classes=["sick", "well"])
    sick = report["sick"]
    # decided: rows 0-5; sick TP rows 0, 2; FN row 1; FP row 4; TN rows 3, 5
    assert (sick.tp, sick.fn, sick.fp, sick.tn) == (2, 1, 1, 2)
    assert sick.sensitivity == pytest.approx(2 / 3) and sick.specificity == pytest.approx(2 / 3)
    assert sick.ppv == pytest.approx(2 / 3) and sick.npv == pytest.approx(2 / 3)
    well = report["well"]
    assert (well.tp, well.fn, well.fp, well.tn) == (2, 1, 1, 2)
    assert report.accuracy == pytest.approx(4 / 6)
    assert report.n_abstained == 2 and report.coverage == pytest.approx(6 / 8)
    text = report.to_text()
    assert "abstained: 2 of 8" in text and "coverage: 0.750" in text and "sensitivity" in text


def test_one_vs_rest_for_three_classes():
    y_true = np.array([0, 0, 1, 1, 2, 2])
    y_pred = np.array([0, 1, 1, 1, 2, 0])
    report = diagnostic_report(y_true, y_pred)
    assert (report[0].tp, report[0].fp, report[0].fn, report[0].tn) == (1, 1, 1, 3)
    assert report[1].ppv == pytest.approx(2 / 3) and report[2].sensitivity == pytest.approx(0.5)
    assert report[2].ppv == 1.0 and np.isnan(
        diagnostic_report([0, 0], [0, 0], classes=[0, 1])[1].sensitivity
    )


def test_pairwise_dag_uses_k_minus_one_trees_per_sample():
    data = load_dataset("satimage")
    dag = PairwiseDAG(TreeClassifier(max_depth=8)).fit(data.X[::2], data.y[::2])
    assert len(dag.estimators_) == 15  # 6 classes
    predicted = dag.predict(data.X[1::2])
    index, evaluations = dag.knock_out(data.X[1::2])
    assert (evaluations == 5).all() and (dag.classes_[index] == predicted).all()
    assert set(predicted) <= set(dag.classes_)
    single = (
        TreeClassifier(max_depth=8).fit(data.X[::2], data.y[::2]).score(data.X[1::2], data.y[1::2])
    )
    assert dag.score(data.X[1::2], data.y[1::2]) > single - 0.03


def test_pairwise_dag_with_two_classes_is_the_binary_tree():
    data = load_dataset("haberman")
    dag = PairwiseDAG(TreeClassifier(max_depth=3)).fit(data.X, data.y)
    tree = TreeClassifier(max_depth=3).fit(data.X, data.y)
    np.testing.assert_array_equal(dag.predict(data.X), tree.predict(data.X))


def test_str_of_a_report_is_the_table_with_wilson_intervals():
    """Issue 37: str() is the multi-line table (its header names sensitivity), each
    measure with its Wilson interval; repr stays the record."""
    from treekit_core.tools.metrics import wilson_interval

    # 8 of 10 by hand: z = 1.95996; center (0.8 + z^2/20) / (1 + z^2/10) = 0.71674,
    # half-width z / (1 + z^2/10) * sqrt(0.016 + z^2/400) = 0.22658
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.49016, abs=1e-5) and high == pytest.approx(0.94332, abs=1e-5)
    assert wilson_interval(0, 0) != wilson_interval(0, 0)  # NaN: no trials
    y_true = [1] * 10 + [0] * 10
    y_pred = [1] * 8 + [0] * 2 + [0] * 9 + [1]
    report = diagnostic_report(y_true, y_pred)
    text = str(report)
    assert text == report.to_text() and "sensitivity" in text.splitlines()[0]
    row = next(line for line in text.splitlines() if line.strip().startswith("1 "))
    assert "0.800 [0.490, 0.943]" in row  # sensitivity of class 1: 8 of 10
    assert report[1].interval("sensitivity") == wilson_interval(8, 10)
    assert repr(report).startswith("DiagnosticReport(")
