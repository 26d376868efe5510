"""The model file of a boosted model: the format of ``model_file.py`` (header, parameters,
classes, categories, each tree as a single tree's) with a ``boosting`` section (the loss,
the raw prediction every row starts from, the scores by round) and the trees as rounds,
each tree with the values its leaves add (a tree's values are otherwise recomputed from
its statistics when read: these are the loss's, so they are stored and checked). Every
field is checked before a kernel walks a tree."""

from __future__ import annotations

import json
import math

import numpy as np

from treekit_core.estimators import model_file
from treekit_core.estimators.model_file import ModelFileError, field

#: The most rounds and raw columns a file may hold (model_file.MAX_TREES trees in all).
MAX_RAW_COLUMNS = 1_000


def boosting_payload(model) -> dict:
    """What ``to_json`` writes of a fitted boosted model, beside the common header."""
    loss = model.loss_
    return {
        "boosting": {
            "loss": {"name": loss.name, "params": model_file.encode_floats(loss.get_params())},
            "initial_raw": model_file.encode_floats(model._init_raw),
            "train_score": model_file.encode_floats(model.train_score_),
            "validation_score": model_file.encode_floats(model.validation_score_),
            **(
                {
                    "baseline": {
                        "times": model_file.encode_floats(model.unique_times_),
                        "cumulative_hazard": model_file.encode_floats(
                            model.cumulative_baseline_hazard_
                        ),
                    }
                }
                if hasattr(model, "cumulative_baseline_hazard_")
                else {}
            ),
        },
        "trees": [
            [
                {
                    "tree": model_file.tree_to_dict(tree),
                    "leaf_values": model_file.encode_floats(tree.value[:, 0]),
                }
                for tree in trees
            ]
            for trees in model.estimators_
        ],
    }


def write(model, path=None) -> str:
    """The model file of ``model`` (written to ``path`` when given)."""
    model._check_fitted()
    payload = {
        **model_file.header_payload(model),
        "categories": [[int(j), levels] for j, levels in model.categories_.items()],
        **boosting_payload(model),
    }
    text = json.dumps(payload)
    if path is not None:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    return text


def _numbers(value, where: str, finite: bool = True) -> np.ndarray:
    try:
        array = np.asarray(model_file.decode_floats(value), dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelFileError(f"{where} must be a list of numbers") from None
    if array.ndim != 1 or (finite and not np.isfinite(array).all()):
        raise ModelFileError(f"{where} must be a list of finite numbers")
    return array


def read(cls, text_or_path):
    """A boosted model of class ``cls`` from its model file, every field checked."""
    payload = model_file.read_json(text_or_path)
    try:
        model_file.check_header(payload, cls.__name__)
    except ValueError as exc:
        raise ModelFileError(f"model file: {exc}") from None
    model = cls._from_json_params(field(payload, "params", dict))
    composition = model.composition_
    try:
        loss = model._make_loss()
    except ValueError as exc:
        raise ModelFileError(f"model file: 'params': {exc}") from None
    labels = model_file.read_classes(payload)
    classifier = model.estimator_type == "classifier"
    if (labels is None) == classifier:
        wanted = "a list of labels" if classifier else "null"
        raise ModelFileError(f"model file: 'classes' must be {wanted} for a {cls.__name__}")
    n_classes = 0 if labels is None else int(labels.shape[0])
    if classifier and n_classes < 2:
        raise ModelFileError("model file: 'classes' must hold at least 2 labels")
    n_raw = loss.n_raw(n_classes)
    boosting = field(payload, "boosting", dict)
    stored_loss = field(boosting, "loss", dict, "model file: 'boosting'")
    if stored_loss.get("name") != loss.name:
        raise ModelFileError(
            f"model file: 'boosting' names loss {stored_loss.get('name')!r}, the parameters "
            f"{loss.name!r}"
        )
    initial = _numbers(field(boosting, "initial_raw", list), "model file: 'initial_raw'")
    if initial.size != n_raw:
        raise ModelFileError(
            f"model file: 'initial_raw' must hold {n_raw} number(s) (loss {loss.name!r})"
        )
    rounds = field(payload, "trees", list)
    if not 1 <= len(rounds) * n_raw <= model_file.MAX_TREES or n_raw > MAX_RAW_COLUMNS:
        raise ModelFileError(
            f"model file: 'trees' must hold 1 to {model_file.MAX_TREES // n_raw} rounds"
        )
    estimators = []
    for r, trees in enumerate(rounds):
        if not isinstance(trees, list) or len(trees) != n_raw:
            raise ModelFileError(
                f"model file: trees[{r}] must list {n_raw} tree(s), one per raw column"
            )
        estimators.append(
            [_read_tree(entry, composition, f"trees[{r}][{k}]") for k, entry in enumerate(trees)]
        )
    n_features = {tree.n_features for trees in estimators for tree in trees}
    if len(n_features) != 1:
        raise ModelFileError("model file: the trees disagree on n_features")
    model.estimators_ = estimators
    model.loss_ = loss
    model._init_raw = initial
    model.train_score_ = _numbers(
        field(boosting, "train_score", list), "model file: 'train_score'", finite=False
    )
    model.validation_score_ = _numbers(
        field(boosting, "validation_score", list),
        "model file: 'validation_score'",
        finite=False,
    )
    model.n_iter_ = model.n_estimators_ = len(estimators)
    model.n_features_in_ = n_features.pop()
    model.categories_ = model_file.read_categories(payload, model.n_features_in_)
    names = payload.get("feature_names")
    if names is not None:
        if not (
            isinstance(names, list)
            and len(names) == model.n_features_in_
            and all(isinstance(n, str) for n in names)
        ):
            raise ModelFileError(
                f"model file: 'feature_names' must list {model.n_features_in_} names (strings)"
            )
        model.feature_names_in_ = np.asarray(names, dtype=object)
    seen = payload.get("missing_at_fit", True)
    if not isinstance(seen, bool):
        raise ModelFileError("model file: 'missing_at_fit' must be true or false")
    model.missing_at_fit_ = seen
    keys = payload.get("column_keys")
    valid = isinstance(keys, list) and len(keys) == model.n_features_in_
    if keys is not None and not (
        valid and all(isinstance(k, (int, str)) and not isinstance(k, bool) for k in keys)
    ):
        raise ModelFileError(
            f"model file: 'column_keys' must list {model.n_features_in_} column labels"
        )
    model._column_keys = keys
    if model.takes == "censored follow-up":
        _read_baseline(model, field(boosting, "baseline", dict, "model file: 'boosting'"))
    if labels is not None:
        model.classes_, model.n_classes_ = labels, n_classes
    return model


def _read_tree(entry, composition, where: str):
    """One boosted tree: the tree checked as a single tree's, then its leaf values (one
    finite number per node) in place of the values recomputed from its statistics."""
    where = f"model file: {where}"
    if not isinstance(entry, dict):
        raise ModelFileError(f"{where} must be an object with 'tree' and 'leaf_values'")
    tree = model_file.read_tree(entry, composition, None, where, stateful=())
    values = _numbers(field(entry, "leaf_values", list, where), f"{where}: 'leaf_values'")
    if values.size != tree.n_nodes:
        raise ModelFileError(f"{where}: 'leaf_values' must hold {tree.n_nodes} numbers")
    if np.abs(values).max(initial=0.0) > math.sqrt(np.finfo(np.float64).max):
        raise ModelFileError(f"{where}: 'leaf_values' holds a value out of range")
    tree.value = values[:, None]
    return tree


def _read_baseline(model, baseline) -> None:
    """Breslow's baseline of a survival model: increasing finite times >= 0, and a
    cumulative hazard >= 0 that never falls, one per time."""
    where = "model file: 'baseline'"
    times = _numbers(field(baseline, "times", list, where), f"{where}: 'times'")
    hazard = _numbers(
        field(baseline, "cumulative_hazard", list, where), f"{where}: 'cumulative_hazard'"
    )
    if times.size < 1 or (times < 0).any() or (np.diff(times) <= 0).any():
        raise ModelFileError(f"{where}: 'times' must be increasing numbers >= 0")
    if hazard.size != times.size or (hazard < 0).any() or (np.diff(hazard) < 0).any():
        raise ModelFileError(
            f"{where}: 'cumulative_hazard' must hold {times.size} numbers >= 0 that never fall"
        )
    model.unique_times_, model.cumulative_baseline_hazard_ = times, hazard
