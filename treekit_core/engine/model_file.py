"""Reading a model file: every field is checked before anything runs on it.

A model file is something people download and share, so loading treats it as hostile: the
JSON is parsed with size and nesting caps, each field is checked against the format (types,
lengths against the tree's node, class and feature counts, ranges), the tree's structure is
checked (:meth:`treekit_core.engine.tree.Tree.check_structure`), what a kernel sizes by is
recomputed from the structure, leaf distributions and decisions are recomputed from the
class sums by the model's labeler, and each component checks its own fitted state
(:meth:`treekit_core.components.Component.check_state`). Nothing in a file executes code:
components and question kinds are looked up by name in the registry.
"""

from __future__ import annotations

import json
import math

import numpy as np

#: Files larger than this are refused before parsing (a tree of 10^6 nodes takes ~300 MB).
MAX_FILE_BYTES = 2 * 1024**3
#: JSON nesting deeper than this is refused before parsing (a model file needs 4 levels).
MAX_NESTING = 64
#: Trees in one forest file.
MAX_TREES = 100_000


class ModelFileError(ValueError):
    """A model file that does not hold a valid treekit model; the message names the field."""


def read_json(text_or_path) -> dict:
    """The model file's JSON object (from a JSON string or a path)."""
    text = str(text_or_path) if not isinstance(text_or_path, bytes) else text_or_path.decode()
    if not text.lstrip().startswith("{"):
        try:
            with open(text_or_path, encoding="utf-8") as handle:
                text = handle.read(MAX_FILE_BYTES + 1)
        except (OSError, UnicodeDecodeError) as exc:
            raise ModelFileError(f"cannot read the model file {text_or_path!r}: {exc}") from None
    if len(text) > MAX_FILE_BYTES:
        raise ModelFileError(f"model file is larger than {MAX_FILE_BYTES} bytes")
    depth = _nesting(text)
    if depth > MAX_NESTING:
        raise ModelFileError(f"model file nests {depth} levels deep; at most {MAX_NESTING}")
    try:
        payload = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ModelFileError(f"model file is not valid JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise ModelFileError("model file must hold a JSON object")
    return payload


def _nesting(text: str) -> int:
    """Deepest bracket nesting outside strings (one pass over the text, before parsing)."""
    import re

    stripped = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
    depth = deepest = 0
    for char in re.findall(r"[\[\]{}]", stripped):
        depth += 1 if char in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def field(payload: dict, key: str, kind, where: str = "model file"):
    """``payload[key]``, which must be of ``kind`` (a type or tuple of types)."""
    if key not in payload:
        raise ModelFileError(f"{where}: the field {key!r} is missing")
    value = payload[key]
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ModelFileError(f"{where}: {key!r} must be {names}, got {type(value).__name__}")
    return value


def read_classes(payload: dict) -> np.ndarray:
    """The class labels, unique, in the stored dtype (which must hold them unchanged)."""
    classes = field(payload, "classes", list)
    dtype_text = field(payload, "classes_dtype", str)
    if len(classes) < 1 or not all(isinstance(c, (str, int, float)) for c in classes):
        raise ModelFileError("model file: 'classes' must be a non-empty list of labels")
    try:
        dtype = np.dtype(dtype_text)
    except TypeError:
        raise ModelFileError(f"model file: 'classes_dtype' {dtype_text!r} is not a dtype") from None
    if dtype.kind not in "iufUSbO" or dtype.kind == "V":
        raise ModelFileError(f"model file: 'classes_dtype' {dtype_text!r} is not a label dtype")
    try:
        values = np.asarray(classes, dtype=dtype)
    except (OverflowError, ValueError, TypeError):
        raise ModelFileError(
            f"model file: 'classes_dtype' {dtype_text!r} cannot hold the classes"
        ) from None
    if values.tolist() != classes:
        raise ModelFileError(
            f"model file: 'classes_dtype' {dtype_text!r} does not hold the classes unchanged"
        )
    if np.unique(values).shape[0] != values.shape[0]:
        raise ModelFileError("model file: 'classes' holds a label twice")
    return values


def read_threshold(value) -> float | None:
    """The reject threshold: None or a finite number."""
    from treekit_core.engine.tree import decode_floats

    if value is None:
        return None
    value = decode_floats(value)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise ModelFileError("model file: 'reject_threshold' must be null or a finite number")
    return float(value)


def read_tree(
    payload: dict,
    composition,
    n_classes: int,
    where: str = "model file: tree",
    stateful=("pruner", "evaluator", "confidence"),
):
    """The tree, checked, relabelled by the composition's labeler, its component state
    checked by the components named in ``stateful`` (a grown tree, before pruning, has
    none)."""
    from treekit_core.engine.tree import Tree

    tree_payload = field(payload, "tree", dict)
    try:
        tree = Tree.from_dict(tree_payload)
    except ValueError as exc:
        raise ModelFileError(f"{where}: {exc}") from None
    if tree.n_classes != n_classes:
        raise ModelFileError(
            f"{where}: class sums have {tree.n_classes} columns, expected {n_classes} "
            "(one per class)"
        )
    state = tree.component_state
    if not isinstance(state, dict):
        raise ModelFileError(f"{where}: 'component_state' must be an object")
    tree.relabel(composition.labeler)  # distributions and decisions are never read
    for kind in stateful:
        try:
            getattr(composition, kind).check_state(state.get(kind, {}), tree)
        except ValueError as exc:
            raise ModelFileError(str(exc)) from None
    return tree


def read_categories(payload: dict, n_features: int) -> dict:
    categories = payload.get("categories", [])
    if not isinstance(categories, list):
        raise ModelFileError("model file: 'categories' must be a list of [index, levels]")
    out = {}
    for entry in categories:
        if (
            not isinstance(entry, list)
            or len(entry) != 2
            or not isinstance(entry[0], int)
            or not 0 <= entry[0] < n_features
            or not isinstance(entry[1], list)
        ):
            raise ModelFileError("model file: 'categories' entries must be [feature index, levels]")
        out[int(entry[0])] = list(entry[1])
    return out
