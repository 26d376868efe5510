"""``treekit evaluate --report``: one self-contained HTML page, checked as text and loaded
in a real browser (headless Chromium; skipped only when none is installed)."""

import re
import shutil
import subprocess

import numpy as np
import pytest

from treekit_core.datasets import dataset_path
from treekit_core.tools.cli import load_model, main


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    data, model_file, page = dataset_path("haberman"), folder / "m.json", folder / "r.html"
    assert main(["fit", str(data), "--target", "class", "--out", str(model_file)]) == 0
    argv = ["evaluate", str(model_file), str(data), "--target", "class", "--report", str(page)]
    assert main(argv) == 0
    return load_model(model_file), page, page.read_text(encoding="utf-8")


def test_the_page_holds_everything_and_needs_no_network(report):
    model, _, text = report
    tree = model.tree_
    assert text.startswith("<!DOCTYPE html>") and "</html>" in text
    assert "pruner cost_complexity(risk=&#x27;prediction&#x27;, cv=10" in text
    assert text.count('class="node') == tree.n_nodes
    assert text.count("<details") == int((~tree.is_leaf).sum())
    titles = re.findall(r'title="([^"]*)"', text)
    assert len(titles) == tree.n_nodes and all("weight" in t for t in titles)
    for heading in ("Composition", "Tree", "Evaluation", "Cross-validated", "Pruning path"):
        assert f"<h2>{heading}</h2>" in text
    assert "resubstitution figures" in text  # evaluated on the training file
    assert "5-fold stratified cross-validation" in text
    for measure in ("sensitivity", "specificity", "PPV", "NPV", "coverage"):
        assert measure in text
    assert "Root node error" in text  # the cp table
    assert not re.search(r"(src|href)=\"(https?:)?//", text)  # nothing fetched
    pytest.importorskip("matplotlib")
    assert text.count('src="data:image/png;base64,') == 3  # two risk-coverage, one path


def test_chromium_loads_the_page_without_console_errors(report, tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium installed (Debian package chromium)")
    model, page, _ = report
    shot = tmp_path / "report.png"
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr"]
    common += ["--v=0", "--window-size=1200,1600"]
    done = subprocess.run(
        [*common, f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert any(f'"treekit report ready: {model.tree_.n_nodes} nodes"' in c for c in console)
    assert not [c for c in console if "Uncaught" in c or "rror" in c], console
    assert shot.stat().st_size > 20000
    dom = subprocess.run(
        [*common, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=180
    )
    assert 'data-ready="yes"' in dom.stdout  # the page's script ran to its end


def test_a_forest_report(tmp_path):
    data, model_file, page = dataset_path("haberman"), tmp_path / "f.json", tmp_path / "f.html"
    assert (
        main(["fit", str(data), "--target", "class", "--forest", "5", "--out", str(model_file)])
        == 0
    )
    argv = ["evaluate", str(model_file), str(data), "--target", "class", "--cv", "3"]
    assert main([*argv, "--report", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert "<h2>Forest</h2><p>5 trees.</p>" in text
    assert "3-fold stratified cross-validation" in text and "<h2>Cross-validated</h2>" not in text


def test_the_report_has_a_python_api_and_names_the_reject_rule(tmp_path):
    """Issue 37: model_report(model, X, y, path=...) writes the page from Python, and its
    composition line names the reject rule (with the threshold chosen) and calibration."""
    from treekit_core import TreeClassifier
    from treekit_core.datasets import load_dataset
    from treekit_core.tools.report import composition_line, model_report

    data = load_dataset("pima")
    model = TreeClassifier(
        max_depth=4, reject={"coverage": 0.8}, calibration="isotonic", abstain_value="?"
    ).fit(data.X, data.y)
    line = composition_line(model)
    assert "reject coverage=0.8, threshold " in line and "calibration 'isotonic'" in line
    page = model_report(model, data.X, data.y, path=tmp_path / "report.html")
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == page
    assert "reject coverage=0.8" in page and "sensitivity" in page and "<h2>Tree</h2>" in page


def test_a_regression_model_has_a_report(tmp_path, capsys):
    """Issue 39: the HTML report of a regressor shows its node values, RMSE / MAE / R^2
    (the figures regression_figures computes), the residual picture and the pruning path,
    from Python and from treekit evaluate --report."""
    from treekit_core import TreeRegressor
    from treekit_core.datasets import dataset_path, load_dataset
    from treekit_core.tools.cli import main
    from treekit_core.tools.metrics import regression_figures
    from treekit_core.tools.report import model_report

    data = load_dataset("airquality")
    model = TreeRegressor(pruner="cost_complexity", min_samples_leaf=7).fit(data.X, data.y)
    page = model_report(model, data.X, data.y, path=tmp_path / "r.html")
    figures = regression_figures(data.y, model.predict(data.X))
    assert f"<td>RMSE</td><td>{figures['rmse']:.6g}</td>" in page
    assert f"<td>R^2</td><td>{figures['r2']:.6g}</td>" in page
    assert page.count("data:image/png;base64") == 2  # residuals and the pruning path
    leaf = int(np.flatnonzero(model.tree_.is_leaf)[0])
    assert f"{model.tree_.value[leaf, 0]:.4g} · weight {model.tree_.weight[leaf]:.4g}" in page
    model_file, report = tmp_path / "m.json", tmp_path / "cli.html"
    assert (
        main(["fit", str(dataset_path("quakes")), "--target", "mag", "--out", str(model_file)]) == 0
    )
    argv = ["evaluate", str(model_file), str(dataset_path("quakes")), "--target", "mag"]
    assert main([*argv, "--cv", "3", "--report", str(report)]) == 0
    text = report.read_text()
    assert "out-of-sample figures: 3-fold cross-validation" in text and "<td>MAE</td>" in text
