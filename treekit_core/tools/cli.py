"""The ``treekit`` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

from treekit_core import (
    BoostingClassifier,
    BoostingEstimator,
    BoostingRegressor,
    BoostingSurvival,
    CausalForest,
    CausalTree,
    ForestClassifier,
    ForestRegressor,
    ForestSurvival,
    RegressorFamily,
    SurvivalFamily,
    SurvivalTree,
    TreatmentEffectFamily,
    TreeClassifier,
    TreeRegressor,
)
from treekit_core.components import KINDS, REGISTERED_KINDS
from treekit_core.datasets import load_dataset, survival_array
from treekit_core.engine.folds import stratified_folds
from treekit_core.engine.rejection import risk_coverage
from treekit_core.estimators.model_file import read_json
from treekit_core.registry import get_registry
from treekit_core.tools import plots
from treekit_core.tools.csvdata import (
    MISSING,
    _number,
    feature_matrix,
    label_column,
    read_text_table,
    rows_digest,
    typed_columns,
)
from treekit_core.tools.export import export_text
from treekit_core.tools.incidence_plots import write_incidence_plots
from treekit_core.tools.metrics import (
    competing_figures,
    diagnostic_report,
    event_quartiles,
    event_time_quartiles,
    regression_figures,
    survival_figures,
)
from treekit_core.tools.progress import Progress
from treekit_core.tools.report import (
    cause_predictions,
    competing_evaluation,
    composition_line,
    html_report,
    regression_evaluation,
    survival_evaluation,
)

#: The kinds chosen by an option of their name (``--criterion gini``). Not the target: on the
#: command line ``--target`` names the CSV column of class labels; a target kind is chosen
#: with ``--set target=<name>``.
OPTION_KINDS = tuple(kind for kind in KINDS if kind != "target")


def stratified_split(y, test_fraction: float, seed: int):
    """Row indices (train, test) with each class split in the same proportion."""
    rng = np.random.default_rng(seed)
    train, test = [], []
    for label in np.unique(y):
        rows = rng.permutation(np.flatnonzero(y == label))
        n_test = int(round(test_fraction * rows.size))
        test.extend(rows[:n_test])
        train.extend(rows[n_test:])
    if not train or not test:
        raise ValueError(
            f"--test-size {test_fraction} leaves {'no training' if not train else 'no test'} "
            f"rows among {len(y)}; give a fraction that keeps rows on both sides"
        )
    return np.sort(np.array(train, dtype=np.int64)), np.sort(np.array(test, dtype=np.int64))


def cmd_demo(args) -> int:
    dataset = load_dataset(args.data, dropna=True)
    train, test = stratified_split(dataset.target, 0.3, args.seed)
    pruned = args.pruner == CLI_PRUNER
    model = TreeClassifier(
        criterion=args.criterion,
        pruner=args.pruner,
        pruner_params=dict(CLI_PRUNER_PARAMS) if pruned else None,
        random_state=args.seed,
        min_samples_leaf=args.min_samples_leaf,
        categorical_features=dataset.categorical if dataset.categorical.any() else None,
    )
    model.fit(dataset.data[train], dataset.target[train])
    print(f"treekit demo: {dataset.name} ({dataset.description})")
    print(f"composition: {composition_line(model)}")
    print(
        f"trained on {train.size} rows, tested on {test.size} (stratified 70/30, seed {args.seed})"
    )
    print(f"leaves: {model.get_n_leaves()}  depth: {model.get_depth()}\n")
    names = list(dataset.feature_names)

    print(export_text(model.tree_, names, model.classes_))
    decision = model.decide(dataset.data[test])
    report = diagnostic_report(
        dataset.target[test], decision.labels, decision.abstained, list(model.classes_)
    )
    print("test metrics:")
    print(report.to_text())
    return 0


def cmd_plugins(args) -> int:
    import attrs

    registry = get_registry()
    print("distributions: " + ", ".join(registry.distributions))
    for kind in REGISTERED_KINDS:
        print(f"\n{kind} components:")
        for name, info in sorted(registry.components(kind).items()):
            params = ", ".join(
                f"{f.name}={f.default!r}" if f.default is not attrs.NOTHING else f.name
                for f in attrs.fields(info.cls)
            )
            print(
                f"  {name:<24} [{info.distribution}] {info.cls.description}"
                + (f"\n  {'':<24} parameters: {params}" if params else "")
            )
    return 0


#: What ``treekit fit`` and ``treekit demo`` grow unless told otherwise: what rpart users
#: expect, a tree pruned by minimal cost-complexity, chosen by 10-fold CV with the 1-SE rule.
CLI_PRUNER = "cost_complexity"
CLI_PRUNER_PARAMS = {"cv": 10, "rule": "one_se"}


#: Estimator parameters the command line sets itself, and how to set them instead.
CLI_OWNED = {
    "categorical_features": "the command line reads a column of text as nominal; write the "
    "column's values as text (a letter in each) to make it nominal",
    "n_estimators": "give the number of trees with --forest N",
}


def parse_settings(items, forest: bool = False, boosting: bool = False):
    """``--set kind.param=value`` (component parameters) and ``--set param=value``
    (parameters of the tree, or with ``forest`` of the forest, with ``boosting`` of the
    boosted model: ``loss``, ``learning_rate``, ``n_estimators``, ...); values are JSON
    when they parse as JSON, strings otherwise."""
    import json

    estimator, components = {}, {}
    for item in items or []:
        if "=" not in item:
            raise ValueError(
                f"--set {item!r}: expected key=value, e.g. criterion.w=0.2 or max_depth=5"
            )
        key, raw = item.split("=", 1)
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        if "." in key:
            kind, param = key.split(".", 1)
            if kind not in KINDS:
                raise ValueError(
                    f"--set {item!r}: unknown component kind {kind!r}; kinds are {', '.join(KINDS)}"
                )
            components.setdefault(f"{kind}_params", {})[param] = value
        else:
            forest_only = set(ForestClassifier._param_names()) - set(TreeClassifier._param_names())
            known = sorted(set(TreeClassifier._param_names()) | forest_only)
            if boosting:
                known = sorted({name for cls in BOOSTING.values() for name in cls._param_names()})
            if key in CLI_OWNED and not (boosting and key == "n_estimators"):
                raise ValueError(f"--set {item!r}: {CLI_OWNED[key]}")
            if key in forest_only and not forest and not boosting:
                raise ValueError(
                    f"--set {item!r}: {key!r} is a parameter of forests, and this is one tree; "
                    "add --forest N to fit a forest of N trees"
                )
            if key not in known:
                import difflib

                close = difflib.get_close_matches(key, known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ValueError(f"--set {item!r}: unknown parameter {key!r}{hint}")
            estimator[key] = value
    return estimator, components


#: A numeric target column with more distinct values than this (or with a fraction) is a
#: measurement: ``--task auto`` fits a regression tree on it.
MAX_CLASSES_AUTO = 20


def choose_task(values: np.ndarray, task: str, target: str) -> tuple[str, str]:
    """(``"classification"`` or ``"regression"``, why) for the target column ``values``."""
    if task != "auto":
        return task, f"--task {task}"
    if values.dtype.kind != "f":
        return "classification", f"{target!r} holds text"
    known = values[~np.isnan(values)]
    distinct = np.unique(known).size
    if (known != np.round(known)).any():
        return "regression", f"{target!r} holds numbers with fractions"
    if distinct > MAX_CLASSES_AUTO:
        return "regression", f"{target!r} holds {distinct} distinct numbers"
    return "classification", f"{target!r} holds {distinct} distinct whole numbers"


def follow_up(columns, args, path):
    """(y as a structured (event, time) array, rows kept) from the ``--time`` and
    ``--event`` columns: times numbers >= 0, events 0/1, or event codes 0 (censored), 1,
    2, ... (competing risks: y's event field then holds the codes as integers, not
    booleans); a row missing either is dropped (it teaches nothing), which the caller
    reports."""
    for option, name in (("--time", args.time), ("--event", args.event)):
        if name is None:
            raise ValueError("survival follow-up needs both --time and --event")
        if name not in columns:
            raise ValueError(f"{option} {name!r} is not a column of {path}")
        if columns[name].dtype.kind != "f":
            raise ValueError(f"{option} {name!r} must hold numbers; it holds text")
    time, event = columns[args.time], columns[args.event]
    kept = ~(np.isnan(time) | np.isnan(event))
    bad = kept & ((event < 0) | (event != np.round(event)))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"--event {args.event!r} holds {event[row]:g} on row {row + 2}; expected 1 (the "
            "event) or 0 (censored), or a cause code 1, 2, ... (competing risks)"
        )
    if (event[kept] > 1).any():  # several kinds of event
        if not (event[kept] == 0).any():
            row = int(np.flatnonzero(kept & (event > 1))[0])
            raise ValueError(
                f"--event {args.event!r} holds {event[row]:g} on row {row + 2} and no 0: "
                "expected 0 (censored) and 1 (the event), or 0 and cause codes 1, 2, ... "
                "(R's Surv codes 1 censored and 2 the event: recode them)"
            )
        codes = event[kept].astype(np.int64)
        return (
            np.array(
                list(zip(codes, time[kept], strict=True)),
                dtype=[("event", np.int64), ("time", np.float64)],
            ),
            kept,
        )
    return survival_array(event[kept] == 1.0, time[kept]), kept


def has_causes(y) -> bool:
    """Whether :func:`follow_up`'s ``y`` holds event codes of several causes."""
    return y.dtype["event"].kind != "b"


def _competing(model) -> bool:
    """Whether a fitted survival model keeps each cause's incidence (its target says)."""
    composition = getattr(model, "composition_", None)
    return composition is not None and "cumulative_incidence" in composition.target.provides


def _fit_survival(args, columns, header, raw) -> int:
    names = [name for name in header if name not in (args.time, args.event)]
    _refuse_numbers_made_nominal(raw, columns, names, args.data)
    X, nominal = feature_matrix(columns, names)
    y, kept = follow_up(columns, args, args.data)
    X = X[kept]
    competing = has_causes(y)
    task = f"competing risks, causes 1..{int(y['event'].max())}" if competing else "survival"
    print(
        f"task: {task} (--time {args.time}, --event {args.event}; {int((~kept).sum())} rows "
        "without follow-up dropped)"
    )
    if args.model == "boosting":
        if competing:
            raise ValueError(
                "--model boosting has no competing-risk loss: fit a tree or --forest for "
                "event codes beyond 0/1"
            )
        return _fit_boosting(args, "survival", X, y, nominal, raw, names)
    estimator, components = parse_settings(args.set, forest=args.forest is not None)
    if competing:
        estimator.setdefault("target", "competing_risks")
    chosen = _chosen_components(args)
    _refuse_class_components(chosen, components, "a survival tree has no {kind}")
    if args.forest is not None:
        _check_forest_size(args.forest)
        estimator.setdefault("random_state", 0)
        model = ForestSurvival(
            n_estimators=args.forest,
            **chosen,
            **components,
            **estimator,
            categorical_features=nominal or None,
        )
    else:
        model = SurvivalTree(
            **chosen, **components, **estimator, categorical_features=nominal or None
        )
        prunes = "pruner" not in chosen and not _stops_by_test(chosen)
        default = _default_survival_pruner(model) if prunes else None
        if default is not None:
            # pruned by default as every other tree the command line grows: rpart's
            # exponential trees by cost complexity with 10-fold CV, log-rank trees (no
            # node risk) by LeBlanc & Crowley's bootstrap-corrected split complexity
            name, params = default
            model.set_params(
                pruner=name,
                pruner_params={**params, **components.get("pruner_params", {})},
                random_state=estimator.get("random_state", 0),
            )
    with observing_progress():
        model.fit(X, y)
    return _write_model(model, args, raw, names, X.shape[0])


#: The command line's pruner for trees whose criterion scores splits by a standardised
#: statistic and whose target has no node risk (log-rank trees).
CLI_SPLIT_PRUNER = "split_complexity"
CLI_SPLIT_PRUNER_PARAMS = {"n_bootstrap": 25}


def _default_survival_pruner(model):
    """(pruner, params) the command line prunes a survival tree with: cost complexity
    where the target measures a node's risk, split complexity where the criterion's split
    score is a standardised statistic, else None (the composition says; an unknown
    component is fit's to refuse)."""
    try:
        composition = model.make_composition()
    except Exception:  # noqa: BLE001 - fit refuses it, naming it
        return None
    if "node_risk" in composition.target.provides:
        return CLI_PRUNER, CLI_PRUNER_PARAMS
    if "standardised_split_statistic" in composition.criterion.provides:
        return CLI_SPLIT_PRUNER, CLI_SPLIT_PRUNER_PARAMS
    return None


def cmd_fit(args) -> int:
    header, raw = read_text_table(args.data)
    columns = typed_columns(raw)
    if args.time is not None or args.event is not None:
        if args.target is not None:
            raise ValueError("give --target (classes, a response) or --time and --event, not both")
        return _fit_survival(args, columns, header, raw)
    if args.target is None:
        raise ValueError("fit needs --target (a class or response column), or --time and --event")
    if args.treatment is not None:
        return _fit_effects(args, columns, header, raw)
    targets = _target_columns(args, columns, header)
    names = [name for name in header if name not in targets]
    if not names:
        raise ValueError(
            f"{args.data} holds only the target column{'s' if len(targets) > 1 else ''} "
            f"{', '.join(map(repr, targets))}; features are needed"
        )
    _refuse_numbers_made_nominal(raw, columns, names, args.data)
    X, nominal = feature_matrix(columns, names)
    if len(targets) > 1:
        task, X, y, why = _several_targets(args, columns, targets, X)
    else:
        task, why = choose_task(columns[args.target], args.task, args.target)
        X, y, why = _one_response(args, columns, task, X, why)
    print(f"task: {task} ({why}; --task to choose)")
    if args.model == "boosting":
        return _fit_boosting(args, task, X, y, nominal, raw, names)
    estimator, components = parse_settings(args.set, forest=args.forest is not None)
    chosen = _chosen_components(args)
    if args.forest is None and "pruner" not in chosen and not _stops_by_test(chosen):
        chosen["pruner"] = CLI_PRUNER
        components["pruner_params"] = {**CLI_PRUNER_PARAMS, **components.get("pruner_params", {})}
        estimator.setdefault("random_state", 0)
    if args.forest is not None:
        _check_forest_size(args.forest)
        estimator.setdefault("random_state", 0)
        forest = ForestRegressor if task == "regression" else ForestClassifier
        if task == "regression":
            chosen.setdefault("criterion", "squared_error")
        model = forest(
            n_estimators=args.forest,
            **chosen,
            **components,
            **estimator,
            categorical_features=nominal or None,
        )
    elif task == "regression":
        _refuse_class_components(
            chosen, components, "a regression tree has no {kind} (it predicts numbers)"
        )
        chosen.setdefault("criterion", "squared_error")
        model = TreeRegressor(
            **chosen, **components, **estimator, categorical_features=nominal or None
        )
    else:
        model = TreeClassifier(
            **chosen, **components, **estimator, categorical_features=nominal or None
        )
    with observing_progress():
        model.fit(X, y)
    return _write_model(model, args, raw, names, X.shape[0], targets)


def _stops_by_test(chosen) -> bool:
    """Whether the chosen splitter stops growth by a test (conditional inference: its trees
    need no pruning, so the command line prunes none)."""
    name = chosen.get("splitter")
    if name is None:
        return False
    try:
        splitter = get_registry().get_class("splitter", name)
    except Exception:  # noqa: BLE001 - an unknown splitter: fit refuses it, naming it
        return False
    return "stops_by_test" in splitter.provides


def _chosen_components(args) -> dict:
    """The components named by their own options (``--criterion gini``, ...)."""
    return {kind: getattr(args, kind) for kind in OPTION_KINDS if getattr(args, kind) is not None}


def _refuse_class_components(chosen, components, refusal: str) -> None:
    """A model that decides among no classes names no labeler or confidence: refused,
    ``refusal`` saying why with the kind in ``{kind}``."""
    for kind in ("labeler", "confidence"):
        if kind in chosen or f"{kind}_params" in components:
            raise ValueError(f"--{kind}: " + refusal.format(kind=kind))


def _check_forest_size(n_trees) -> None:
    if n_trees < 1:
        raise ValueError(f"--forest must be a number of trees >= 1, got {n_trees}")


def _fit_effects(args, columns, header, raw) -> int:
    """fit --target y --treatment w: the treatment's effect on y per row, a causal tree
    (--forest N: a causal forest) on the other columns; rows missing y or w dropped."""
    targets = _target_columns(args, columns, header)
    if len(targets) > 1 or args.model == "boosting":
        raise ValueError("--treatment takes one --target column and a tree or --forest")
    if args.treatment not in columns or args.treatment == args.target:
        raise ValueError(
            f"--treatment {args.treatment!r} must be a column of {args.data} other than "
            f"--target; columns: {', '.join(header)}"
        )
    outcome, treated = columns[args.target], columns[args.treatment]
    for name, values in ((args.target, outcome), (args.treatment, treated)):
        if values.dtype.kind != "f":
            raise ValueError(f"--treatment fits need numbers in {name!r}; it holds text")
    names = [name for name in header if name not in (args.target, args.treatment)]
    if not names:
        raise ValueError(f"{args.data} holds no feature columns besides --target and --treatment")
    _refuse_numbers_made_nominal(raw, columns, names, args.data)
    X, nominal = feature_matrix(columns, names)
    kept = ~(np.isnan(outcome) | np.isnan(treated))
    estimator, components = parse_settings(args.set, forest=args.forest is not None)
    chosen = _chosen_components(args)
    _refuse_class_components(
        chosen, components, "a causal tree has no {kind} (it predicts effects)"
    )
    estimator.setdefault("random_state", 0)
    settings = {**chosen, **components, **estimator, "categorical_features": nominal or None}
    if args.forest is not None:
        _check_forest_size(args.forest)
        model = CausalForest(n_estimators=args.forest, **settings)
    else:
        model = CausalTree(**settings)
    print(
        f"task: treatment effect of {args.treatment!r} on {args.target!r} "
        f"({int((~kept).sum())} rows without both dropped)"
    )
    with observing_progress():
        model.fit(X[kept], outcome[kept], treated[kept])
    return _write_model(model, args, raw, names, int(kept.sum()))


def _one_response(args, columns, task, X, why) -> tuple:
    """(X, y, why) for one ``--target`` column: numbers for regression (rows without one
    dropped, as rpart drops them), class labels otherwise."""
    if task != "regression":
        return X, label_column(columns[args.target]), why
    y = columns[args.target]
    if y.dtype.kind != "f":
        raise ValueError(f"--task regression needs numbers in {args.target!r}; it holds text")
    missing = np.isnan(y)
    if missing.any():  # a row without its response teaches nothing (rpart drops it too)
        X, y = X[~missing], y[~missing]
        why += f"; {_rows_without(missing, args.target)} dropped"
    return X, y, why


def _target_columns(args, columns, header) -> list:
    """The ``--target`` columns (several: the responses of a regressor of several
    outputs), each a column of the file, none twice; ``args.target`` becomes the one
    column's name where there is one."""
    targets = list(args.target)
    for name in targets:
        if name not in columns:
            raise ValueError(
                f"--target {name!r} is not a column of {args.data}; columns: {', '.join(header)}"
            )
    if len(set(targets)) != len(targets):
        raise ValueError(f"--target names a column twice: {' '.join(targets)}")
    args.target = targets[0] if len(targets) == 1 else targets
    return targets


def _several_targets(args, columns, targets, X) -> tuple:
    """(task, X, y n x k, why) for several ``--target`` columns (scikit-learn's 2-D y): the
    class labels of a classifier of several outputs where every column holds classes
    (``choose_task``, or ``--task``), else the numbers of a regressor's outputs."""
    if args.model == "boosting":
        raise ValueError("--model boosting fits one --target column (one output)")
    tasks = {name: choose_task(columns[name], args.task, name) for name in targets}
    kinds = {task for task, _ in tasks.values()}
    if len(kinds) > 1:
        raise ValueError(
            "several --target columns are all classes or all measurements; "
            + "; ".join(why for _, why in tasks.values())
            + " (--task to choose, or one model per kind)"
        )
    if kinds == {"regression"}:
        return ("regression", *_several_responses(columns, targets, X))
    y = np.column_stack([label_column(columns[name]).astype(object) for name in targets])
    return "classification", X, y, f"{len(targets)} class columns: a classifier of several outputs"


def _several_responses(columns, targets, X) -> tuple:
    """(X, y n x k, why) for several ``--target`` columns: numbers each (a regressor of
    several outputs; scikit-learn's 2-D y), rows missing any of them dropped."""
    for name in targets:
        if columns[name].dtype.kind != "f":
            raise ValueError(
                f"several --target columns are the responses of a regressor and must hold "
                f"numbers; {name!r} holds text"
            )
    why = f"{len(targets)} response columns: a regressor of several outputs"
    y = np.column_stack([columns[name] for name in targets])
    missing = np.isnan(y).any(axis=1)
    if missing.any():  # a row without its responses teaches nothing
        X, y = X[~missing], y[~missing]
        count = int(np.count_nonzero(missing))
        why += f"; {count} row{'s' if count != 1 else ''} without a value of every --target dropped"
    return X, y, why


#: The boosted model of each task (``fit --model boosting``).
BOOSTING = {
    "classification": BoostingClassifier,
    "regression": BoostingRegressor,
    "survival": BoostingSurvival,
}
#: What predicts censored follow-up: survival curves, ``--times``, ``--time``/``--event``.
SURVIVAL_MODELS = (SurvivalFamily, BoostingSurvival)
#: The component options a boosted model takes: its trees are squared-error trees on the
#: gradient, so only how they search and route.
BOOSTING_KINDS = ("splitter", "propagator", "evaluator")


def _fit_boosting(args, task, X, y, nominal, raw, names) -> int:
    """``fit --model boosting``: the task's boosted model from ``--set`` parameters and
    the splitter, propagator and evaluator options (the rest are refused, naming them)."""
    if args.forest is not None:
        raise ValueError("--forest N grows a forest; --model boosting boosts: give one of them")
    estimator, components = parse_settings(args.set, boosting=True)
    chosen = _chosen_components(args)
    for kind in OPTION_KINDS:
        if kind not in BOOSTING_KINDS and (kind in chosen or f"{kind}_params" in components):
            raise ValueError(
                f"--{kind}: a boosted model's trees are squared-error trees on the loss's "
                f"gradient; it takes --{', --'.join(BOOSTING_KINDS)} and --set loss=..."
            )
    estimator.setdefault("random_state", 0)
    model = BOOSTING[task](
        **chosen, **components, **estimator, categorical_features=nominal or None
    )
    with observing_progress():
        model.fit(X, y)
    return _write_model(model, args, raw, names, X.shape[0])


def _write_model(model, args, raw, names, n_rows, targets=()) -> int:
    """Save a fitted model with its feature names and its training rows' digest (and the
    response columns of a model of several outputs), and say what was fitted."""
    model.feature_names_in_ = np.asarray(names, dtype=object)
    payload = json.loads(model.to_json())
    # evaluate recognises these rows and says its figures are resubstitution figures
    payload["training_rows"] = {"sha256": rows_digest(raw, names), "n_rows": int(n_rows)}
    if len(targets) > 1:  # predict names its columns after them
        payload["target_columns"] = list(targets)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(payload, handle)
    if isinstance(model, BoostingEstimator):
        size = f"{model.n_iter_} rounds of {len(model.estimators_[0])} tree(s)"
    elif args.forest is not None:
        size = f"{len(model.estimators_)} trees"
    else:
        size = f"{model.get_n_leaves()} leaves"
    print(f"composition: {composition_line(model)}")
    print(f"fitted {size} on {n_rows} rows; wrote {args.out}")
    return 0


def _refuse_numbers_made_nominal(raw, columns, names, path) -> None:
    """A column of numbers with a few values that are not (``N/A``, ``1,234``) would be read
    as nominal, every number a category of its own: refused, naming the column and the
    values that made it text."""

    for name in names:
        if columns[name].dtype != object:
            continue
        present = [(row, v) for row, v in enumerate(raw[name]) if v not in MISSING]
        text = [(row, v) for row, v in present if _number(v) is None]
        if not present or len(text) > 0.2 * len(present):
            continue  # a column of text: nominal, as meant
        shown = ", ".join(f"{v!r} (row {row + 2})" for row, v in text[:3])
        more = f" and {len(text) - 3} more" if len(text) > 3 else ""
        raise ValueError(
            f"{path}: column {name!r} holds numbers, but {shown}{more} "
            f"{'is not a number' if len(text) == 1 else 'are not numbers'}, so it "
            "would be read as nominal (every number a category). Write a missing value as an "
            "empty field, ?, NA or NaN, and numbers without thousands separators"
        )


def load_model(path):
    """The estimator a model file holds (the file says which)."""

    estimators = {
        "TreeClassifier": TreeClassifier,
        "ForestClassifier": ForestClassifier,
        "TreeRegressor": TreeRegressor,
        "ForestRegressor": ForestRegressor,
        "SurvivalTree": SurvivalTree,
        "ForestSurvival": ForestSurvival,
        "CausalTree": CausalTree,
        "CausalForest": CausalForest,
        **{cls.__name__: cls for cls in BOOSTING.values()},
    }
    kind = read_json(path).get("estimator", "TreeClassifier")
    if kind not in estimators:
        raise ValueError(f"model file {path} holds an unknown estimator {kind!r}")
    return estimators[kind].from_json(path)


class observing_progress:
    def __enter__(self):
        self.progress = Progress()
        get_registry().register(self.progress, "treekit-progress")
        return self.progress

    def __exit__(self, *exc):
        get_registry().unregister(self.progress)
        self.progress.close()


def _load_rows(model_path, data_path, target=None):
    """The model, X read from the CSV as the model reads its columns, and the columns.
    ``target``: the target column, or a list of them (a model of several outputs)."""
    targets = target if isinstance(target, list) else [target]

    model = load_model(model_path)
    header, raw = read_text_table(data_path)
    if hasattr(model, "feature_names_in_"):
        names = list(model.feature_names_in_)
    else:
        names = [name for name in header if name not in targets]
        if len(names) != model.n_features_in_:
            besides = f" besides --target {target!r}" if target else ""
            raise ValueError(
                f"{model_path} records no feature names (it was fitted on an array), so "
                f"{data_path} must hold exactly its {model.n_features_in_} feature columns in "
                f"order{besides}; it holds {len(names)}: {', '.join(names)}"
            )
    missing = [name for name in names if name not in raw]
    if missing:
        raise ValueError(f"{data_path} lacks the model's columns {missing}")
    categories = getattr(model, "categories_", {})
    text = {  # "1" in a column of text categories is the category "1"
        names[j]
        for j, levels in categories.items()
        if levels and all(isinstance(v, str) for v in levels)
    }
    classes = getattr(model, "classes_", np.zeros(0))
    label_sets = classes if isinstance(classes, list) else [classes]
    for name, labels in zip(targets, label_sets, strict=False):  # target may be None
        if labels.dtype.kind in "US" or any(isinstance(v, str) for v in labels.tolist()):
            text.add(name)  # text labels stay text
    columns = typed_columns(raw, text)
    for j, name in enumerate(names):
        if j not in categories and columns[name].dtype == object:
            row = next(i for i, v in enumerate(columns[name]) if v is not None)
            raise ValueError(
                f"{data_path}: column {name!r} holds text ({columns[name][row]!r} on row "
                f"{row + 2}) but the model was fitted with numbers in it"
            )
    X, _ = feature_matrix(columns, names)
    return model, X, columns, raw, names


def cmd_predict(args) -> int:
    import csv

    model, X, *_ = _load_rows(args.model, args.data)
    _refuse_times(model, args)
    out = open(args.out, "w", newline="") if args.out else sys.stdout
    if isinstance(model, SURVIVAL_MODELS) and _competing(model):
        times = _survival_times(model, args.times)
        risk, incidence = cause_predictions(model, X, times)
        causes = range(1, risk.shape[1] + 1)
        try:
            writer = csv.writer(out)
            writer.writerow(
                [f"risk_cause_{k}" for k in causes]
                + [f"incidence_{k}_at_{t:g}" for k in causes for t in times]
            )
            for i in range(X.shape[0]):
                writer.writerow(
                    [f"{v:.10g}" for v in risk[i]]
                    + [f"{curve[i, j]:.6g}" for curve in incidence for j in range(times.size)]
                )
        finally:
            if args.out:
                out.close()
        return 0
    if isinstance(model, SURVIVAL_MODELS):
        times = _survival_times(model, args.times)
        survival = model.predict_survival_at(X, times)
        try:
            writer = csv.writer(out)
            writer.writerow(["risk"] + [f"survival_at_{t:g}" for t in times])
            for risk, row in zip(model.predict(X), survival, strict=True):
                writer.writerow([f"{risk:.10g}"] + [f"{v:.6g}" for v in row])
        finally:
            if args.out:
                out.close()
        return 0
    if isinstance(model, TreatmentEffectFamily):  # the effect and its 95% interval
        effect = model.predict(X)
        bounds = model.predict_interval(X, alpha=0.05)
        if effect.ndim == 1:
            names = ["effect", "effect_lower_95", "effect_upper_95"]
            effect, bounds = effect[:, None], bounds[:, None, :]
        else:  # several arms: each arm's effect against the control, then its interval
            names = [
                f"effect_{k}{end}"
                for k in range(1, effect.shape[1] + 1)
                for end in ("", "_lower_95", "_upper_95")
            ]
        try:
            writer = csv.writer(out)
            writer.writerow(names)
            writer.writerows(
                [
                    f"{v:.10g}"
                    for e, (lo, hi) in zip(arms, arm_bounds, strict=True)
                    for v in (e, lo, hi)
                ]
                for arms, arm_bounds in zip(effect, bounds, strict=True)
            )
        finally:
            if args.out:
                out.close()
        return 0
    if isinstance(model, RegressorFamily):
        predicted = model.predict(X)
        try:
            writer = csv.writer(out)
            if predicted.ndim == 1:
                writer.writerow(["prediction"])
                writer.writerows([f"{v:.10g}"] for v in predicted)
            else:  # several outputs: a column each, named after its response column
                writer.writerow(_prediction_columns(args.model, predicted.shape[1]))
                writer.writerows([f"{v:.10g}" for v in row] for row in predicted)
        finally:
            if args.out:
                out.close()
        return 0
    if getattr(model, "n_outputs_", 1) > 1:  # several outputs' labels: a column each
        labels = model.predict(X)
        try:
            writer = csv.writer(out)
            writer.writerow(_prediction_columns(args.model, labels.shape[1]))
            writer.writerows(labels.tolist())
        finally:
            if args.out:
                out.close()
        return 0
    decision = model.decide(X)
    try:
        writer = csv.writer(out)
        writer.writerow(
            ["prediction", "abstained", "confidence"] + [f"p_{c}" for c in model.classes_]
        )
        for i in range(X.shape[0]):
            label = "" if decision.abstained[i] else decision.labels[i]
            writer.writerow(
                [label, int(decision.abstained[i]), f"{decision.confidence[i]:.6g}"]
                + [f"{p:.6g}" for p in decision.proba[i]]
            )
    finally:
        if args.out:
            out.close()
    return 0


def _prediction_columns(model_path, n_outputs: int) -> list:
    """The header of a model's predictions of several outputs: ``prediction_<column>``,
    named after the target columns fit recorded (their numbers where it recorded none)."""
    named = read_json(model_path).get("target_columns")
    if not isinstance(named, list) or len(named) != n_outputs:
        named = [str(j) for j in range(n_outputs)]
    return [f"prediction_{name}" for name in named]


def _survival_times(model, text):
    """The times of ``--times`` (comma-separated numbers), or the quartiles of the model's
    training event times (:func:`event_time_quartiles`; ``evaluate`` reads the quartiles
    of its file's, which are the same on the training file)."""
    if text:
        try:
            times = np.array([float(v) for v in text.split(",")])
        except ValueError:
            raise ValueError(f"--times must be numbers separated by commas, got {text!r}") from None
        if not (np.isfinite(times).all() and (times >= 0).all()):
            raise ValueError(f"--times must be finite numbers >= 0, got {text!r}")
        return times
    return event_time_quartiles(model.unique_times_[model.is_event_time_])


def _evaluate_survival(model, X, columns, args, raw, names) -> int:
    """``evaluate`` for a survival model: Harrell's concordance and the integrated Brier
    score over the quartiles of the event times (the file's own follow-up gives the
    censoring weights), on the file as it is or out of sample (K-fold CV)."""
    _check_split_options(args.cv, args.test_size)
    y, kept = follow_up(columns, args, args.data)
    X = X[kept]
    if has_causes(y) != _competing(model):
        raise ValueError(
            f"--event {args.event!r} holds "
            + ("several causes" if has_causes(y) else "one kind of event")
            + f", and the model was fitted on {'several' if _competing(model) else 'one'}"
        )
    events = y["event"].astype(np.int64)
    if args.cv is not None:
        fold = stratified_folds(events, args.cv, np.random.default_rng(args.seed))
        splits = [(np.flatnonzero(fold != k), np.flatnonzero(fold == k)) for k in range(args.cv)]
        what = f"{args.cv}-fold cross-validation stratified by event (seed {args.seed})"
    elif args.test_size is not None:
        splits = [stratified_split(events, args.test_size, args.seed)]
        what = (
            f"a {1 - args.test_size:.0%}/{args.test_size:.0%} split stratified by event "
            f"(seed {args.seed})"
        )
    else:
        splits = None
        what = f"the model as saved, on {args.data}"
        if _warn_if_resubstitution(args, raw, names):
            what += " (the training rows: resubstitution figures)"
    if splits is None:
        parts = [(np.arange(len(y)), model)]
    else:
        params = _composition_for(model, args)
        parts = [
            (test, type(model)(**params).fit(X[train], y[train]))
            for train, test in splits
            if test.size
        ]
    evaluated = np.concatenate([rows for rows, _ in parts])
    X, y = X[evaluated], y[evaluated]  # the held-out rows, in the order of the parts
    if _competing(model):
        return _evaluate_causes(model, X, y, parts, args, what)
    times = _survival_times(model, args.times) if args.times else event_quartiles(y)
    risk = np.empty(len(y))
    survival = np.empty((len(y), times.size))
    start = 0
    for rows, fitted in parts:
        block = slice(start, start + rows.size)
        risk[block] = fitted.predict(X[block])
        survival[block] = fitted.predict_survival_at(X[block], times)
        start += rows.size
    figures = survival_figures(y, risk, survival, times)
    print(f"{what}; composition: {composition_line(model)}")
    print(f"rows: {figures['rows']} ({figures['events']} events)")
    listed = ", ".join(f"{t:g}" for t in times)
    for name, value in list(figures.items())[2:]:
        where = (
            f" (at the event-time quartiles {listed})" if "Brier" in name or "AUC" in name else ""
        )
        print(f"{name}{where}: {value:.4f}")
    if args.plots:
        written = plots.write_survival_plots(model, X, y, args.plots, what)
        print("wrote " + ", ".join(str(p) for p in written))
    if args.report:
        _write_report(model, args, survival_evaluation(figures, model, X, y, what))
    return 0


def _evaluate_causes(model, X, y, parts, args, what) -> int:
    """``evaluate``'s figures per cause for a competing-risk model
    (:func:`competing_figures`: Wolbers' concordance of each cause's column of ``predict``
    and the Brier score of its incidence at the quartiles of the event times, ``--times``
    to choose), on the rows of the ``parts`` (held out, or the file as it is); ``--plots``
    draws the stacked incidences, ``--report`` writes the page."""
    time, code = y["time"].astype(np.float64), y["event"].astype(np.int64)
    follow = np.column_stack([time, code])
    times = (
        _survival_times(model, args.times) if args.times else event_time_quartiles(time[code > 0])
    )
    # the parts' rows are X's in order: their predictions side by side
    found, start = [], 0
    for rows, fitted in parts:
        found.append(cause_predictions(fitted, X[start : start + rows.size], times))
        start += rows.size
    risk = np.concatenate([part_risk for part_risk, _ in found])
    incidence = np.concatenate([part_incidence for _, part_incidence in found], axis=1)
    figures = competing_figures(follow, risk, incidence, times)
    print(f"{what}; composition: {composition_line(model)}")
    print(f"rows: {int(figures['rows'])} ({int(figures['events'])} events)")
    for name, value in list(figures.items())[2:]:
        print(f"{name}: {value:.4f}" if "events" not in name else f"{name}: {int(value)}")
    if args.plots:
        written = write_incidence_plots(model, X, follow, args.plots, what)
        print("wrote " + ", ".join(str(p) for p in written))
    if args.report:
        _write_report(model, args, competing_evaluation(figures, model, X, follow, what))
    return 0


def _write_report(model, args, evaluation, cross_validated=None, composition=None) -> None:
    """``--report``: the HTML page of ``model`` with ``evaluation`` (and the
    ``cross_validated`` figures) written to ``args.report``, said once."""
    page = html_report(
        model,
        title=f"treekit: {args.model} on {args.data}",
        composition=composition_line(model) if composition is None else composition,
        evaluation=evaluation,
        cross_validated=cross_validated,
    )
    with open(args.report, "w", encoding="utf-8") as handle:
        handle.write(page)
    print(f"wrote {args.report}")


def _composition_for(model, args) -> dict:
    """The model's parameters, overridden by the component options and ``--set`` values
    given to ``evaluate``."""

    params = model.get_params(deep=False)
    estimator, components = parse_settings(args.set, forest=hasattr(model, "estimators_"))
    for kind in OPTION_KINDS:
        if getattr(args, kind, None) is not None:
            params[kind] = getattr(args, kind)
            params[f"{kind}_params"] = None
    params.update(components)
    params.update(estimator)
    return params


def _check_split_options(cv, test_size) -> None:
    """``--cv K`` is a number of folds >= 2; ``--test-size F`` a fraction in (0, 1)."""
    if cv is not None and not (isinstance(cv, int) and cv >= 2):
        raise ValueError(f"--cv must be a number of folds >= 2, got {cv}")
    if test_size is not None and not 0.0 < test_size < 1.0:
        raise ValueError(f"--test-size must be a fraction in (0, 1), got {test_size}")


def _out_of_sample(model, X, y, args, cv, test_size):
    """(decisions on held-out rows, their true labels, what was done) for ``cv`` folds or
    a held-out fraction ``test_size``: the composition refitted on the training part of
    each split."""

    _check_split_options(cv, test_size)
    params = _composition_for(model, args)
    make = type(model)
    if cv is not None:
        _, encoded = np.unique(y, return_inverse=True)
        fold = stratified_folds(encoded, cv, np.random.default_rng(args.seed))
        splits = [(np.flatnonzero(fold != k), np.flatnonzero(fold == k)) for k in range(cv)]
        what = f"{cv}-fold stratified cross-validation (seed {args.seed})"
    else:
        splits = [stratified_split(y, test_size, args.seed)]
        what = f"a stratified {1 - test_size:.0%}/{test_size:.0%} split (seed {args.seed})"
    parts, truth, fitted = [], [], None
    for train, test in splits:
        if test.size == 0:
            continue
        fitted = make(**params).fit(X[train], y[train])
        parts.append(fitted.decide(X[test]))
        truth.append(y[test])
    return parts, np.concatenate(truth), what, fitted


def _figures(model, labels, abstained, confidence, y_true, what) -> dict:
    report = diagnostic_report(y_true, labels, abstained, list(model.classes_))
    correct = ~abstained & (np.asarray(labels, dtype=object) == np.asarray(y_true, dtype=object))
    return {"what": what, "report": report, "curve": risk_coverage(confidence, correct)}


def _pooled(model, parts, truth, what) -> dict:
    labels = np.concatenate([d.labels.astype(object) for d in parts])
    abstained = np.concatenate([d.abstained for d in parts])
    confidence = np.concatenate([d.confidence for d in parts])
    return _figures(model, labels, abstained, confidence, truth, what)


def _true_classes(values: np.ndarray, classes: np.ndarray, target: str, path) -> np.ndarray:
    """The target column as the model's class dtype. A row without a class, or a number
    that the model's integer classes cannot be (1.5), is refused naming the row: cast as
    it was, an empty cell became INT64_MIN (an error) and 1.5 became 1 (correct)."""
    # typed columns are float64 (NaN: missing) or objects (None: missing)
    present = (
        np.array([v is not None for v in values]) if values.dtype == object else ~np.isnan(values)
    )
    if not present.all():
        rows = np.flatnonzero(~present)
        raise ValueError(
            f"{path}: the target column {target!r} is empty on row {rows[0] + 2}"
            + (f" and {rows.size - 1} more" if rows.size > 1 else "")
            + "; every evaluated row needs its true class"
        )
    if classes.dtype.kind not in "iuf":
        return values
    if values.dtype == object:
        row = next(i for i, v in enumerate(values) if _number(v) is None)
        raise ValueError(
            f"{path}: the target column {target!r} holds {values[row]!r} on row {row + 2}; "
            f"the model's classes are numbers ({', '.join(map(str, classes[:5].tolist()))})"
        )
    if classes.dtype.kind in "iu":
        fractional = np.flatnonzero(values != np.round(values))
        if fractional.size:
            row = int(fractional[0])
            raise ValueError(
                f"{path}: the target column {target!r} holds {values[row]:g} on row {row + 2}; "
                f"the model's classes are whole numbers ({', '.join(map(str, classes[:5]))})"
            )
    return values.astype(classes.dtype)


def _refuse_times(model, args) -> None:
    """``--times`` reads a survival model's curves; another model has none."""
    if getattr(args, "times", None) and not isinstance(model, SURVIVAL_MODELS):
        raise ValueError(
            f"--times reads a survival model's curves; {args.model} holds a "
            f"{type(model).__name__}, which predicts no survival"
        )


def cmd_evaluate(args) -> int:
    if args.plots:
        from importlib.util import find_spec

        if find_spec("matplotlib") is None:
            raise ValueError("--plots needs matplotlib: pip install matplotlib")
    if args.cv is not None and args.test_size is not None:
        raise ValueError("give --cv K or --test-size F, not both")
    if args.time is not None or args.event is not None:
        model, X, columns, raw, names = _load_rows(args.model, args.data, None)
        if not isinstance(model, SURVIVAL_MODELS):
            raise ValueError(f"--time and --event evaluate a survival model; {args.model} is not")
        return _evaluate_survival(model, X, columns, args, raw, names)
    if args.target is None:
        raise ValueError("evaluate needs --target, or --time and --event for a survival model")
    if len(args.target) > 1:
        return _evaluate_outputs(args)
    args.target = args.target[0]
    model, X, columns, raw, names = _load_rows(args.model, args.data, args.target)
    if isinstance(model, TreatmentEffectFamily):
        raise ValueError(
            f"{args.model} predicts a treatment's effect, which no row observes, so it has no "
            "figures against --target: `treekit predict` gives each row's effect and its "
            "95% interval"
        )
    _refuse_times(model, args)
    if args.target not in columns:
        raise ValueError(f"--target {args.target!r} is not a column of {args.data}")
    if getattr(model, "n_outputs_", 1) > 1:
        raise ValueError(
            f"{args.model} predicts {model.n_outputs_} outputs: give their "
            f"{model.n_outputs_} columns to --target"
        )
    if isinstance(model, RegressorFamily):
        return _evaluate_regression(model, X, columns[args.target], raw, names, args)
    y = _true_classes(columns[args.target], model.classes_, args.target, args.data)
    composition = composition_line(model)
    if args.cv is not None or args.test_size is not None:
        parts, y_true, what, last = _out_of_sample(model, X, y, args, args.cv, args.test_size)
        composition = composition_line(last)
        figures = _pooled(model, parts, y_true, f"out-of-sample figures: {what}")
        print(f"{figures['what']}; composition: {composition}")
    else:
        decision = model.decide(X)
        what = f"the model as saved, on {args.data}"
        if _warn_if_resubstitution(args, raw, names):
            what += " (the training rows: resubstitution figures)"
        figures = _figures(model, decision.labels, decision.abstained, decision.confidence, y, what)
    print(figures["report"].to_text())
    curve = figures["curve"]
    print("\nrisk-coverage (confidence threshold, coverage, error on accepted):")
    step = max(1, len(curve.coverage) // 10)
    for t, c, r in list(zip(curve.thresholds, curve.coverage, curve.risk, strict=True))[::step]:
        print(f"  {t:>12.6g}  {c:6.3f}  {r:6.3f}")
    print(f"area under the risk-coverage curve: {curve.area:.4f}")
    if args.plots:
        # the risk-coverage curve of the figures printed (out of sample where they are)
        label = "resubstitution" if args.cv is None and args.test_size is None else what
        written = plots.write_evaluation_plots(
            model, X, y, args.plots, curves={label: figures["curve"]}
        )
        print("wrote " + ", ".join(str(p) for p in written))
    if args.report:
        cross_validated = None
        if args.cv is None:  # the report always carries cross-validated figures
            parts, y_true, what, _ = _out_of_sample(model, X, y, args, REPORT_FOLDS, None)
            cross_validated = _pooled(model, parts, y_true, f"out-of-sample figures: {what}")
        _write_report(model, args, figures, cross_validated, composition)
    return 0


def _rows_without(missing, target) -> str:
    """How many rows lack a value of the response column ``target``, for the line that says
    they were set aside (fit and evaluate both leave them out)."""
    count = int(np.count_nonzero(missing))
    return f"{count} row{'s' if count != 1 else ''} without a value of {target!r}"


def _evaluate_outputs(args) -> int:
    """``evaluate`` with several ``--target`` columns: a model of as many outputs, as
    saved: a regressor's RMSE, MAE and R^2 per output on the rows that hold every
    response; a classifier's accuracy per output and of whole rows (every output right)."""
    targets = list(args.target)
    if args.cv is not None or args.test_size is not None or args.report or args.plots:
        raise ValueError(
            "a model of several outputs is evaluated as saved: --cv, --test-size, --report "
            "and --plots take one --target column"
        )
    model, X, columns, raw, names = _load_rows(args.model, args.data, targets)
    outputs = getattr(model, "n_outputs_", 1)
    if outputs != len(targets):
        raise ValueError(
            f"{len(targets)} --target columns evaluate a model of {len(targets)} outputs; "
            f"{args.model} predicts {outputs}"
        )
    unknown = [name for name in targets if name not in columns]
    if unknown:
        raise ValueError(f"--target {unknown[0]!r} is not a column of {args.data}")
    if not isinstance(model, RegressorFamily):
        return _evaluate_label_outputs(model, X, columns, targets, args, raw, names)
    for name in targets:
        if columns[name].dtype.kind != "f" or np.isinf(columns[name]).any():
            raise ValueError(f"{args.data}: the target column {name!r} must hold finite numbers")
    values = np.column_stack([columns[name] for name in targets])
    missing = np.isnan(values).any(axis=1)
    if missing.all():
        raise ValueError(f"{args.data}: no row holds a value of every --target column")
    if missing.any():
        X, values = X[~missing], values[~missing]
        print(f"{int(missing.sum())} rows without a value of every --target left out")
    _warn_if_resubstitution(args, raw, names)
    print(f"the model as saved, on {args.data}; composition: {composition_line(model)}")
    predicted = model.predict(X)
    print(f"rows  {values.shape[0]}")
    print(f"{'output':<20} {'RMSE':>12} {'MAE':>12} {'R^2':>10}")
    for j, name in enumerate(targets):
        figures = regression_figures(values[:, j], predicted[:, j])
        print(f"{name:<20} {figures['rmse']:>12.6g} {figures['mae']:>12.6g} {figures['r2']:>10.6f}")
    return 0


def _evaluate_label_outputs(model, X, columns, targets, args, raw, names) -> int:
    """``evaluate`` of a classifier of several outputs, as saved: each output's accuracy
    and the share of rows whose every output is right (scikit-learn's subset accuracy,
    the classifier's ``score``)."""
    truth = [
        _true_classes(columns[name], classes, name, args.data)
        for name, classes in zip(targets, model.classes_, strict=True)
    ]
    _warn_if_resubstitution(args, raw, names)
    print(f"the model as saved, on {args.data}; composition: {composition_line(model)}")
    predicted = model.predict(X)
    right = np.column_stack([predicted[:, j] == t for j, t in enumerate(truth)])
    print(f"rows  {X.shape[0]}")
    print(f"{'output':<20} {'accuracy':>10}")
    for j, name in enumerate(targets):
        print(f"{name:<20} {right[:, j].mean():>10.6f}")
    print(f"{'every output':<20} {right.all(axis=1).mean():>10.6f}")
    return 0


def _evaluate_regression(model, X, values, raw, names, args) -> int:
    """``evaluate`` for a regression tree: RMSE, MAE and R^2, on the file's rows that hold
    the response (the others are left out, as fit drops them, and counted) as they are or
    out of sample (K-fold cross-validation or a held-out fraction, shuffled with the seed)."""
    if args.plots:
        raise ValueError(
            "--plots pictures classification trees only, for now; --report "
            "draws a regression tree, its figures and residuals"
        )
    if values.dtype.kind != "f":
        raise ValueError(f"{args.data}: the target column {args.target!r} must hold numbers")
    missing = np.isnan(values)
    if missing.all():
        raise ValueError(
            f"{args.data}: the target column {args.target!r} is empty on every row; "
            "evaluating needs rows with their true values"
        )
    if np.isinf(values).any():
        row = int(np.flatnonzero(np.isinf(values))[0])
        raise ValueError(
            f"{args.data}: the target column {args.target!r} holds {values[row]:g} on row "
            f"{row + 2}; a response must be a finite number"
        )
    if missing.any():  # left out as fit drops them, and said (rpart's na.rpart likewise)
        X, values = X[~missing], values[~missing]
        print(f"{_rows_without(missing, args.target)} left out")
    if args.cv is not None or args.test_size is not None:
        _check_split_options(args.cv, args.test_size)
        params = _composition_for(model, args)
        order = np.random.default_rng(args.seed).permutation(values.size)
        if args.cv is not None:
            tests = np.array_split(order, args.cv)
            what = f"{args.cv}-fold cross-validation (seed {args.seed})"
        else:
            tests = [order[: max(1, round(args.test_size * values.size))]]
            what = f"a {1 - args.test_size:.0%}/{args.test_size:.0%} split (seed {args.seed})"
        predicted = np.full(values.size, np.nan)
        for test in tests:
            train = np.setdiff1d(order, test)
            fitted = type(model)(**params).fit(X[train], values[train])
            predicted[test] = fitted.predict(X[test])
        held = np.concatenate(tests)
        figures = regression_figures(values[held], predicted[held])
        what = f"out-of-sample figures: {what}"
        print(f"{what}; composition: {composition_line(fitted)}")
    else:
        held = np.arange(values.size)
        predicted = model.predict(X)
        figures = regression_figures(values, predicted)
        what = f"the model as saved, on {args.data}"
        _warn_if_resubstitution(args, raw, names)
        print(f"the model as saved, on {args.data}; composition: {composition_line(model)}")
    print(f"rows  {figures['n']}")
    print(f"RMSE  {figures['rmse']:.6g}")
    print(f"MAE   {figures['mae']:.6g}")
    print(f"R^2   {figures['r2']:.6f}")
    if args.report:
        _write_report(model, args, regression_evaluation(values[held], predicted[held], what))
    return 0


#: Folds of the cross-validation a report adds when ``--cv`` was not asked for.
REPORT_FOLDS = 5


def _warn_if_resubstitution(args, raw, names) -> bool:
    """Say (on stderr and stdout) when the evaluated file holds the rows the model was
    fitted on; True when it does."""
    training = _training_rows(args.model)
    if training is None or training != rows_digest(raw, names):
        return False
    warning = (
        f"warning: {args.data} holds the rows {args.model} was fitted on: these are "
        "resubstitution figures, optimistic by construction; use --cv K or "
        "--test-size F (or a file the model has not seen) for honest ones"
    )
    # on stdout with the figures it qualifies, and on stderr for whoever redirects stdout;
    # once where both streams are one terminal
    if not (sys.stdout.isatty() and sys.stderr.isatty()):
        print(warning, file=sys.stderr)
    print(warning)
    return True


def _training_rows(model_path):
    """The digest of the rows the CLI fitted the model on (None for other model files)."""

    record = read_json(model_path).get("training_rows")
    if isinstance(record, dict) and isinstance(record.get("sha256"), str):
        return record["sha256"]
    return None


def cmd_path(args) -> int:
    model = load_model(args.model)
    if not hasattr(model, "cp_table"):
        raise ValueError(f"{args.model} holds a forest; a cp table belongs to one tree")
    try:
        table = model.cp_table()
    except AttributeError as exc:  # a pruner that records no path: say so, not "unexpected"
        raise ValueError(f"{args.model}: {exc}") from None
    print(table, end="")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="treekit", description="Compose, fit and use decision trees."
    )
    parser.add_argument("--version", action="version", version=f"treekit {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser(
        "demo", help="fit a tree on a bundled data set and print it with test metrics"
    )
    demo.add_argument("--data", default="wdbc", help="bundled data set (default: wdbc)")
    demo.add_argument("--criterion", default="gini")
    demo.add_argument(
        "--pruner",
        default=CLI_PRUNER,
        help="default: cost_complexity with 10-fold CV and the 1-SE rule, as rpart",
    )
    demo.add_argument("--min-samples-leaf", type=int, default=7)
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(run=cmd_demo)
    plugins = sub.add_parser("plugins", help="list installed components by kind")
    plugins.set_defaults(run=cmd_plugins)

    fit = sub.add_parser("fit", help="fit a tree on a CSV and save it as JSON")
    fit.add_argument("data")
    fit.add_argument(
        "--target",
        nargs="+",
        default=None,
        help="the class or response column (several response columns: a regressor of "
        "several outputs)",
    )
    fit.add_argument(
        "--treatment",
        default=None,
        help="the treatment column (0 control, 1 treated; several arms 0, 1, ..., K-1): fit "
        "the treatment's effect on --target (a causal tree; --forest N: a causal forest)",
    )
    fit.add_argument("--time", default=None, help="survival: the follow-up time column")
    fit.add_argument(
        "--event", default=None, help="survival: the event column (1 event, 0 censored)"
    )
    fit.add_argument(
        "--task",
        choices=("auto", "classification", "regression"),
        default="auto",
        help=f"auto (default): regression when the target holds fractions or more than "
        f"{MAX_CLASSES_AUTO} distinct numbers, else classification",
    )
    for kind in OPTION_KINDS:
        fit.add_argument(
            f"--{kind}",
            default=None,
            help=(
                "pruner name (default for a tree: cost_complexity with 10-fold CV and the 1-SE "
                "rule, as rpart; 'none' grows the full tree)"
                if kind == "pruner"
                else f"{kind} component name"
            ),
        )
    fit.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="parameter: kind.param=value (e.g. criterion.w=0.2) or estimator param (max_depth=5)",
    )
    fit.add_argument("--out", required=True, help="model JSON file to write")
    fit.add_argument(
        "--forest",
        type=int,
        default=None,
        metavar="N",
        help="fit a forest of N trees (ForestClassifier) instead of one tree",
    )
    fit.add_argument(
        "--model",
        choices=("tree", "boosting"),
        default="tree",
        help="tree (default; --forest N for a forest) or boosting: gradient-boosted trees "
        "(loss, learning_rate, n_estimators, max_depth, ... by --set)",
    )
    fit.set_defaults(run=cmd_fit)
    predict = sub.add_parser(
        "predict", help="predict a CSV with a saved model (CSV to stdout or --out)"
    )
    predict.add_argument("model")
    predict.add_argument("data")
    predict.add_argument("--out", default=None)
    predict.add_argument(
        "--times",
        default=None,
        help="survival models: times to write the survival at (comma-separated; default the "
        "quartiles of the training event times)",
    )
    predict.set_defaults(run=cmd_predict)
    evaluate = sub.add_parser(
        "evaluate", help="metrics with abstentions, coverage and a risk-coverage table"
    )
    evaluate.add_argument("model")
    evaluate.add_argument("data")
    evaluate.add_argument(
        "--target",
        nargs="+",
        default=None,
        help="the class or response column (several: the responses of a model of several outputs)",
    )
    evaluate.add_argument("--time", default=None, help="survival: the follow-up time column")
    evaluate.add_argument("--event", default=None, help="survival: the event column")
    evaluate.add_argument(
        "--cv",
        type=int,
        default=None,
        metavar="K",
        help="stratified K-fold cross-validation of the model's composition on DATA",
    )
    evaluate.add_argument(
        "--test-size",
        type=float,
        default=None,
        metavar="F",
        help="refit on a stratified 1-F of DATA and evaluate on the rest",
    )
    evaluate.add_argument("--seed", type=int, default=0, help="seed of the folds / split")
    evaluate.add_argument(
        "--times",
        default=None,
        help="survival models: times to read the Brier score and AUC at (comma-separated; "
        "default the quartiles of the file's event times, the ones predict uses on the "
        "training file)",
    )
    for kind in OPTION_KINDS:
        evaluate.add_argument(
            f"--{kind}", default=None, help=f"with --cv / --test-size: another {kind}"
        )
    evaluate.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="with --cv / --test-size: as fit"
    )
    evaluate.add_argument(
        "--plots", default=None, metavar="DIR", help="also write pictures (needs matplotlib)"
    )
    evaluate.add_argument(
        "--report",
        default=None,
        metavar="FILE.html",
        help="also write one self-contained HTML page: composition, tree, figures (with "
        f"{REPORT_FOLDS}-fold CV ones unless --cv is given) and pictures",
    )
    evaluate.set_defaults(run=cmd_evaluate)
    path = sub.add_parser(
        "path", help="print the pruning path of a saved tree as rpart's printcp table"
    )
    path.add_argument("model")
    path.set_defaults(run=cmd_path)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("treekit-core")
    except PackageNotFoundError:
        return "unknown (not installed)"


def _notices_on_one_line() -> None:
    """A first compile's notice is one stderr line, not a Python warning's two."""
    import warnings

    shown = warnings.showwarning
    if getattr(shown, "treekit_one_line", False):
        return

    def show(message, category, filename, lineno, file=None, line=None):
        if category.__name__ == "CompilationNotice":
            print(str(message), file=sys.stderr, flush=True)
            return
        shown(message, category, filename, lineno, file, line)

    show.treekit_one_line = True
    warnings.showwarning = show


def main(argv=None) -> int:
    _notices_on_one_line()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except BrokenPipeError:  # the reader (``| head``) stopped reading: not an error
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - replaces the closed stream
        except OSError:
            pass
        return 0
    except (ValueError, OSError, KeyError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"treekit {args.command}: error: {message}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the README promises one-line errors
        if os.environ.get("TREEKIT_TRACEBACK"):
            raise
        message = str(exc).splitlines()[0] if str(exc) else ""
        print(
            f"treekit {args.command}: unexpected error: {type(exc).__name__}: {message} "
            "(TREEKIT_TRACEBACK=1 shows where; please report it)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
