"""``treekit evaluate ... --report FILE.html``: one self-contained page to open and share.

The page needs no network: styles and the little script are inline, pictures are PNG
data URIs (drawn when matplotlib is installed; the page says so otherwise). It shows the
composition, the tree (collapsible nodes coloured by the decided class, deeper for purer
nodes; every node's class distribution on hover and in its box), the evaluation figures
and their cross-validated counterparts, the diagnostic report (sensitivity, specificity,
PPV, NPV, coverage) and the risk-coverage and pruning-path pictures.
"""

from __future__ import annotations

import base64
import html
import io

import numpy as np

from treekit_core.components.question import QuestionTextContext
from treekit_core.engine.rejection import RejectRule
from treekit_core.engine.tree_text import _names, branch_texts, test_note
from treekit_core.engine.validation import check_event_codes
from treekit_core.tools import plots
from treekit_core.tools.incidence_plots import plot_cumulative_incidence
from treekit_core.tools.metrics import (
    competing_figures,
    diagnostic_report,
    event_quartiles,
    event_time_quartiles,
    regression_figures,
    survival_figures,
)
from treekit_core.tools.node_style import edge_labels, node_hex, rgb_hex
from treekit_core.tools.plots import _pyplot

OPEN_DEPTH = 3  #: nodes shallower than this start expanded
#: Most leaves the HTML tree lists; a larger tree is listed down to the depth that fits
#: and each subtree below is one line (its leaves and weight), as ``plot_tree`` draws it.
HTML_LEAVES = 500

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 80em; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
.composition { font-family: monospace; background: #f4f4f4; padding: .5em; }
table { border-collapse: collapse; } td, th { padding: .2em .7em; text-align: right; }
th { border-bottom: 1px solid #999; } td:first-child, th:first-child { text-align: left; }
.tree ul { list-style: none; margin: 0 0 0 1.4em; padding: 0; border-left: 1px dotted #aaa; }
.tree li { margin: .15em 0; }
.node { display: inline-block; padding: .1em .5em; border: 1px solid #555;
        border-radius: .4em; font-size: .9em; }
.abstain { border-style: dashed; }
.edge { color: #555; font-size: .8em; margin-right: .4em; }
summary { cursor: pointer; }
.dist { color: #333; font-size: .8em; margin-left: .5em; }
.note { color: #666; font-size: .9em; }
"""

SCRIPT = """
function setAll(open) {
  document.querySelectorAll('.tree details').forEach(function (d) { d.open = open; });
}
document.getElementById('expand').addEventListener('click', function () { setAll(true); });
document.getElementById('collapse').addEventListener('click', function () { setAll(false); });
document.body.dataset.ready = 'yes';
console.log('treekit report ready: ' + document.querySelectorAll('.tree .node').length +
            ' nodes');
"""


def _distribution(model, node) -> str:
    tree = model.tree_
    if not hasattr(model, "classes_"):  # a regression tree: its value
        return f"value {tree.value[node, 0]:.6g}; weight {tree.weight[node]:.4g}"
    shares = ", ".join(f"{c}: {tree.value[node, k]:.1%}" for k, c in enumerate(model.classes_))
    return f"{shares}; weight {tree.weight[node]:.4g}"


def tree_html(model, max_leaves: int = HTML_LEAVES) -> str:
    """The tree as nested lists; internal nodes are <details> that open and close. A tree
    with more than ``max_leaves`` leaves is listed down to the depth that fits, each
    subtree below summarised on one line (its leaves and weight)."""

    tree = model.tree_
    names = list(getattr(model, "feature_names_in_", [])) or None
    context = QuestionTextContext(_names(tree, names), getattr(model, "categories_", {}), 4)

    values = None if hasattr(model, "classes_") else tree.value[:, 0]
    colours = None if values is None else plots.value_colours(values)
    limit = plots.shown_depth(tree, max_leaves)
    leaves_under = tree.leaves_under()

    def box(node, text) -> str:
        decided = int(tree.decision[node])
        if values is not None:  # a regression tree: value and weight, a value colour
            return (
                f'<span class="node" style="background:{rgb_hex(colours[node])}" '
                f'title="{html.escape(_distribution(model, node))}">{html.escape(text)}</span>'
                f'<span class="dist">{values[node]:.4g} · weight {tree.weight[node]:.4g}</span>'
            )
        label = "abstain" if decided < 0 else str(model.classes_[decided])
        css = "node abstain" if decided < 0 else "node"
        return (
            f'<span class="{css}" style="background:{node_hex(tree, node)}" '
            f'title="{html.escape(_distribution(model, node))}">{html.escape(text)}</span>'
            f'<span class="dist">{html.escape(label)} · {tree.value[node].max():.0%} of '
            f"{tree.weight[node]:.4g}</span>"
        )

    # depth first without recursion (a tree may be thousands of levels deep): the stack
    # holds nodes still to open and the closing tags of the ones opened
    pieces, stack = [], [(0, 0, None)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            pieces.append(item)
            continue
        node, depth, edge = item
        if edge is not None:
            pieces.append(f'<li><span class="edge">{html.escape(edge)}</span>')
            stack.append("</li>")
        if tree.is_leaf[node]:
            decided = int(tree.decision[node])
            if values is not None:
                pieces.append(box(node, f"{values[node]:.4g}"))
            else:
                pieces.append(box(node, "ABSTAIN" if decided < 0 else str(model.classes_[decided])))
            continue
        if depth >= limit:  # below the depth that fits: the subtree on one line
            pieces.append(box(node, f"{int(leaves_under[node])} leaves below"))
            continue
        texts = branch_texts(tree, node, context)
        question = texts[0] if len(texts) == 2 else texts[0].split(" = ")[0]
        tested = test_note(tree, node)
        question += f" ({tested})" if tested else ""
        opened = " open" if depth < OPEN_DEPTH else ""
        pieces.append(f"<details{opened}><summary>{box(node, question)}</summary><ul>")
        stack.append("</ul></details>")
        kids = tree.children(node).tolist()
        edges = edge_labels(tree, node, context)
        branches = list(zip(kids, edges, strict=True))
        stack.extend((child, depth + 1, edge) for child, edge in reversed(branches))
    return "".join(pieces)


def report_table(report) -> str:
    rows = "".join(
        f"<tr><td>{html.escape(str(f.label))}</td><td>{f.sensitivity:.3f}</td>"
        f"<td>{f.specificity:.3f}</td><td>{f.ppv:.3f}</td><td>{f.npv:.3f}</td>"
        f"<td>{f.support:g}</td></tr>"
        for f in report.per_class
    )
    decided = report.n_samples - report.n_abstained
    return (
        "<table><tr><th>class</th><th>sensitivity</th><th>specificity</th><th>PPV</th>"
        f"<th>NPV</th><th>support</th></tr>{rows}</table>"
        f"<p>accuracy on decided samples: <b>{report.accuracy:.3f}</b> ({decided} decided); "
        f"abstained: {report.n_abstained} of {report.n_samples}; coverage: "
        f"{report.coverage:.3f}</p>"
    )


def _picture(draw) -> str:
    try:
        plt = _pyplot()
    except ImportError:
        return NO_MATPLOTLIB
    fig, ax = plt.subplots(figsize=(7, 4))
    draw(ax)
    fig.tight_layout()
    return _embedded(fig)


NO_MATPLOTLIB = '<p class="note">(pictures need matplotlib: pip install matplotlib)</p>'


def _embedded(fig) -> str:
    """A drawn figure as an inline PNG (closed after)."""
    plt = _pyplot()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode()
    return f'<img alt="picture" src="data:image/png;base64,{data}">'


def loss_by_round(model, ax) -> None:
    """A boosted model's training loss (``train_score_``) and, with early stopping, its
    held-out loss (``validation_score_``) after each round."""
    rounds = np.arange(1, model.train_score_.size + 1)
    ax.plot(rounds, model.train_score_, label="training")
    if model.validation_score_.size:
        ax.plot(rounds[: model.validation_score_.size], model.validation_score_, label="held out")
    ax.set_xlabel("round")
    ax.set_ylabel(f"loss ({model.loss_.name})")
    ax.legend()


def composition_line(model) -> str:
    """The composition in one readable line: ``criterion gini; splitter exhaustive; ...;
    pruner cost_complexity(cv=10, rule='one_se')``, then the reject rule and the
    calibration when the model has them."""
    parts = []
    chosen = model.get_params(deep=False)  # a regressor fixes the kinds it does not use
    for kind, entry in model.composition_.describe().items():
        if kind not in chosen:
            continue
        params = ", ".join(f"{k}={v!r}" for k, v in entry["params"].items() if v is not None)
        parts.append(f"{kind} {entry['name']}" + (f"({params})" if params else ""))
    rule = RejectRule.from_param(getattr(model, "reject", None))
    if rule is not None:
        threshold = getattr(model, "reject_threshold_", None)
        chosen = f", threshold {threshold:.4g}" if threshold is not None else ""
        parts.append(f"reject {rule.describe()}{chosen}")
    if getattr(model, "calibration", None) is not None:
        parts.append(f"calibration {model.calibration!r}")
    return "; ".join(parts)


def model_report(model, X, y, *, title=None, path=None) -> str:
    """The HTML report of a fitted model on rows ``X`` with labels ``y`` (its figures:
    sensitivity, specificity, PPV and NPV with abstentions, the risk-coverage curve; a
    regressor's RMSE, MAE, R^2 and residuals; a survival model's concordance, Brier score,
    time-dependent AUC and leaves' Kaplan-Meier curves, ``y`` its follow-up), written to
    ``path`` when given: the page ``treekit evaluate --report`` writes, from Python."""
    what = f"figures on the {len(y)} rows given"
    composition = getattr(model, "composition_", None)
    if composition is not None and "cumulative_incidence" in composition.target.provides:
        time, code = check_event_codes(y, len(y))
        follow = np.column_stack([time, code])
        times = event_time_quartiles(time[code > 0])
        figures = competing_figures(follow, *cause_predictions(model, X, times), times)
        evaluation = competing_evaluation(figures, model, X, follow, what)
    elif hasattr(model, "predict_survival_function"):
        times = event_quartiles(y)  # as treekit evaluate reads them
        figures = survival_figures(y, model.predict(X), model.predict_survival_at(X, times), times)
        evaluation = survival_evaluation(figures, model, X, y, what)
    elif not hasattr(model, "decide"):  # a regressor: RMSE, MAE, R^2 and the residuals
        evaluation = regression_evaluation(np.asarray(y), model.predict(X), what)
    else:
        y = np.asarray(y)
        decision = model.decide(X)
        figures = diagnostic_report(y, decision.labels, decision.abstained, list(model.classes_))
        evaluation = {"what": what, "report": figures, "curve": model.risk_coverage(X, y)}
    page = html_report(
        model,
        title=title or f"treekit: {type(model).__name__}",
        composition=composition_line(model),
        evaluation=evaluation,
    )
    if path is not None:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(page)
    return page


def regression_evaluation(y_true, y_pred, what: str) -> dict:
    """A regressor's figures on rows with responses ``y_true`` and predictions ``y_pred``,
    as :func:`html_report` shows them (:func:`treekit_core.tools.metrics.regression_figures`
    and the residuals)."""
    y_true, y_pred = np.asarray(y_true, dtype=np.float64), np.asarray(y_pred, dtype=np.float64)
    figures = regression_figures(y_true, y_pred)
    return {
        "what": what,
        "regression": {
            "rows": figures["n"],
            "RMSE": figures["rmse"],
            "MAE": figures["mae"],
            "R^2": figures["r2"],
        },
        "residuals": (y_pred, y_true - y_pred),
    }


def survival_evaluation(figures, model, X, y, what: str) -> dict:
    """A survival model's figures (:func:`treekit_core.tools.metrics.survival_figures`) as
    :func:`html_report` shows them, with its leaves' Kaplan-Meier curves on ``X``, ``y``."""
    return {"what": what, "survival": figures, "curves": (model, X, y)}


def cause_predictions(model, X, times) -> tuple:
    """(``predict``: a column per cause, each cause's incidence at ``times``: causes x rows
    x times) of a competing-risk model: what :func:`competing_figures` scores."""
    risk = model.predict(X)
    incidence = np.stack(
        [
            model.predict_cumulative_incidence(X, cause=k, times=times)
            for k in range(1, risk.shape[1] + 1)
        ]
    )
    return risk, incidence


def competing_evaluation(figures, model, X, y, what: str) -> dict:
    """A competing-risk model's figures per cause (:func:`competing_figures`) as
    :func:`html_report` shows them, with the stacked incidences on ``X``, ``y``."""
    return {"what": what, "causes": figures, "incidences": (model, X, y)}


def _competing_block(block) -> list:
    rows = "".join(
        f"<tr><td>{html.escape(name)}</td><td>{value:.6g}</td></tr>"
        for name, value in block["causes"].items()
    )
    model, X, y = block["incidences"]
    try:
        figure = plot_cumulative_incidence(model, X, y)
    except ImportError:
        return [f"<table>{rows}</table>", NO_MATPLOTLIB]
    return [f"<table>{rows}</table>", _embedded(figure)]


def _survival_block(block) -> list:
    rows = "".join(
        f"<tr><td>{html.escape(name)}</td><td>{value:.6g}</td></tr>"
        for name, value in block["survival"].items()
    )
    model, X, y = block["curves"]
    if not hasattr(model, "tree_"):  # a forest: no leaves to draw
        return [f"<table>{rows}</table>"]
    return [
        f"<table>{rows}</table>",
        _picture(lambda ax: plots.plot_survival_curves(model, X, y, ax)),
    ]


def _regression_block(block) -> list:
    rows = "".join(
        f"<tr><td>{html.escape(name)}</td><td>{value:.6g}</td></tr>"
        for name, value in block["regression"].items()
    )
    predicted, residual = block["residuals"]
    return [
        f"<table>{rows}</table>",
        _picture(lambda ax: plots.draw_residuals(predicted, residual, ax, title=False)),
    ]


def html_report(model, *, title, composition, evaluation, cross_validated=None) -> str:
    """The page. ``evaluation`` and ``cross_validated`` are dicts with ``what`` (a
    sentence), ``report`` (a DiagnosticReport) and ``curve`` (a RiskCoverage); for a
    regressor, ``regression`` (RMSE, MAE, R^2) and ``residuals`` (predictions, residuals):
    :func:`regression_evaluation`."""

    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        "<h2>Composition</h2>",
        f'<p class="composition">{html.escape(composition)}</p>',
    ]
    if hasattr(model, "tree_"):
        tree = model.tree_
        parts += [
            f"<h2>Tree</h2><p>{tree.n_leaves} leaves, depth {tree.max_depth}. Click a "
            "question to open or close it; hover a box for its class distribution or value. "
            '<button id="expand">expand all</button> '
            '<button id="collapse">collapse all</button></p>',
            f'<div class="tree">{tree_html(model)}</div>',
        ]
    elif hasattr(model, "train_score_"):  # boosted: the loss by round
        parts += [
            f"<h2>Boosting</h2><p>{model.n_iter_} rounds of {len(model.estimators_[0])} "
            f"tree(s), loss {html.escape(model.loss_.name)}, learning rate "
            f"{model.learning_rate:g}.</p>"
            '<p hidden><button id="expand"></button><button id="collapse"></button></p>',
            _picture(lambda ax: loss_by_round(model, ax)),
        ]
    else:
        parts += [
            f"<h2>Forest</h2><p>{len(model.estimators_)} trees.</p>"
            '<p hidden><button id="expand"></button><button id="collapse"></button></p>'
        ]
    for heading, block in (("Evaluation", evaluation), ("Cross-validated", cross_validated)):
        if block is None:
            continue
        if "regression" in block or "survival" in block or "causes" in block:
            parts += [f"<h2>{heading}</h2><p>{html.escape(block['what'])}</p>"]
            if "causes" in block:
                parts += _competing_block(block)
            else:
                parts += (
                    _regression_block(block) if "regression" in block else _survival_block(block)
                )
            continue
        parts += [
            f"<h2>{heading}</h2><p>{html.escape(block['what'])}</p>",
            report_table(block["report"]),
            f"<p>area under the risk-coverage curve: {block['curve'].area:.4f}</p>",
            _picture(lambda ax, c=block["curve"]: plots.plot_risk_coverage({"confidence": c}, ax)),
        ]
    pruner_state = model.tree_.component_state.get("pruner", {}) if hasattr(model, "tree_") else {}
    if "split_statistic" in pruner_state:  # split complexity (log-rank trees)
        parts += ["<h2>Pruning path</h2>", f"<pre>{html.escape(model.cp_table())}</pre>"]
    if hasattr(model, "tree_") and "cv_error" in model.tree_.component_state.get("pruner", {}):
        parts += [
            "<h2>Pruning path</h2>",
            _picture(lambda ax: plots.plot_pruning_path(model, ax)),
            f"<pre>{html.escape(model.cp_table())}</pre>",
        ]
    parts += [f"<script>{SCRIPT}</script></body></html>"]
    return "\n".join(parts)
