"""The model file, all of it: what ``to_json`` writes and what ``from_json`` reads, every
field checked before anything runs on it.

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
import re

import attrs
import numpy as np

from treekit_core.components import KINDS
from treekit_core.components.base import from_json_value, json_value
from treekit_core.components.errors import ModelFileError
from treekit_core.engine.composition import CompositionError
from treekit_core.engine.constraints import check_tree_constraints, resolve_constraints
from treekit_core.engine.rejection import RejectRule
from treekit_core.engine.tree import (
    ARRAY_FIELDS,
    EDGE_FIELDS,
    LEAF,
    Tree,
    binary_links,
    children_from_links,
)
from treekit_core.estimators.inputs import adopt_outputs, composition_for_labels
from treekit_core.estimators.regression import LeafMembers
from treekit_core.registry import PluginError

#: Files larger than this are refused before parsing: a tree of 10^6 nodes takes about
#: 300 MB, so 2 GiB holds a forest of several million nodes. Parsing holds the text and the
#: parsed objects, several times the file's size, at once.
MAX_FILE_BYTES = 2 * 1024**3
#: JSON nesting deeper than this is refused before parsing (a model file needs 4 levels).
MAX_NESTING = 64
#: Trees in one forest file.
MAX_TREES = 100_000


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
        raise ModelFileError(
            f"model file is larger than {MAX_FILE_BYTES} bytes (2 GiB, about 6 million tree "
            "nodes); treekit refuses larger files before reading them"
        )
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


#: The rest of a JSON string after its opening quote: runs of plain characters and escape
#: pairs, which never match the same character, so a match (or the failure of an
#: unterminated string) takes one pass. Possessive (Python 3.11+), the engine keeps no
#: backtracking state per escape (the plain form holds about 60 bytes per escape).
try:
    _STRING_REST = re.compile(r'[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
except re.error:  # Python 3.10
    _STRING_REST = re.compile(r'(?:[^"\\]|\\.)*"', re.DOTALL)
#: Characters of text between strings looked at at once (what the check's memory is).
_SLICE = 1 << 20


def _nesting(text: str) -> int:
    """Deepest bracket nesting outside strings, before parsing: one pass over the text, in
    time linear in its length and memory bounded by :data:`_SLICE` (the brackets between
    strings are counted a slice at a time with numpy, never listed). An unterminated string
    ends the count: such a text is not JSON, which the parser then says."""
    depth = deepest = 0
    position, length = 0, len(text)
    # the text between strings is gathered until a slice's worth, then counted at once (a
    # model file holds a string per non-finite number: one numpy call per gap was most of
    # reading a large tree)
    gathered, size = [], 0
    while position < length:
        quote = text.find('"', position)
        end = length if quote < 0 else quote
        for start in range(position, end, _SLICE):
            piece = text[start : min(end, start + _SLICE)]
            gathered.append(piece)
            size += len(piece)
            if size >= _SLICE:
                depth, deepest = _bracket_levels("".join(gathered), depth, deepest)
                gathered, size = [], 0
        if quote < 0:
            break
        string = _STRING_REST.match(text, quote + 1)
        if string is None:
            break
        position = string.end()
    if gathered:
        depth, deepest = _bracket_levels("".join(gathered), depth, deepest)
    return deepest


def _bracket_levels(segment: str, depth: int, deepest: int) -> tuple[int, int]:
    """(depth after ``segment``, deepest level so far), ``segment`` holding no string."""
    codes = np.frombuffer(segment.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    steps = (codes == ord("[")).astype(np.int8) + (codes == ord("{"))
    steps -= (codes == ord("]")).astype(np.int8) + (codes == ord("}"))
    if not steps.any():
        return depth, deepest
    levels = np.cumsum(steps, dtype=np.int64)
    return depth + int(levels[-1]), max(deepest, depth + int(levels.max()))


def field(payload: dict, key: str, kind, where: str = "model file"):
    """``payload[key]``, which must be of ``kind`` (a type or tuple of types)."""
    if key not in payload:
        raise ModelFileError(f"{where}: the field {key!r} is missing")
    value = payload[key]
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ModelFileError(f"{where}: {key!r} must be {names}, got {type(value).__name__}")
    return value


def read_classes(payload: dict) -> np.ndarray | list | None:
    """The class labels, unique, in the stored dtype (which must hold them unchanged); for
    several outputs (a list of lists, ``classes_dtype`` a list too) a list of one such
    array per output; None (``"classes": null``) for a target that decides among no
    labels."""
    if payload.get("classes", []) is None:
        return None
    classes = field(payload, "classes", list)
    if classes and all(isinstance(c, list) for c in classes):
        dtypes = field(payload, "classes_dtype", list)
        if len(dtypes) != len(classes) or len(classes) < 2:
            raise ModelFileError(
                "model file: 'classes' of several outputs needs two or more lists and "
                "'classes_dtype' one dtype per list"
            )
        return [
            _label_set(labels, dtype_text, f"'classes' of output {j}")
            for j, (labels, dtype_text) in enumerate(zip(classes, dtypes, strict=True))
        ]
    return _label_set(classes, field(payload, "classes_dtype", str), "'classes'")


def _label_set(classes, dtype_text, what: str) -> np.ndarray:
    """One output's class labels (:func:`read_classes`); ``what`` names them."""
    if not isinstance(dtype_text, str):
        raise ModelFileError(f"model file: the dtype of {what} must be a string")
    if len(classes) < 1 or not all(isinstance(c, (str, int, float)) for c in classes):
        raise ModelFileError(f"model file: {what} must be a non-empty list of labels")
    try:
        dtype = np.dtype(dtype_text)
    except TypeError:
        raise ModelFileError(
            f"model file: the dtype of {what} {dtype_text!r} is not a dtype"
        ) from None
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

    if value is None:
        return None
    value = decode_floats(value)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise ModelFileError("model file: 'reject_threshold' must be null or a finite number")
    return float(value)


# -- the tree's part of the file ----------------------------------------------------

#: Format of :func:`tree_to_dict`: 4 (issue 59) writes a binary tree's links as
#: ``children_left`` / ``children_right`` and its children's shares only where they are not
#: the defaults (:func:`~treekit_core.engine.tree.binary_links`), any other tree as format
#: 3 did (``child_start``, ``child_ids``, ``child_shares``). Formats 1 (binary trees,
#: question codes) and 2 (the node sums named ``class_sums``) are converted on read.
TREE_FORMAT = 4
#: The fields a binary tree of format 4 holds in place of format 3's child lists.
LINK_FIELDS = ("children_left", "children_right", "left_shares", "right_shares")
#: Question codes of format 1, by the names of the kinds that replaced them.
_FORMAT1_QUESTIONS = ("threshold", "subset", "oblique")


def encode_floats(obj):
    """JSON-safe copy: non-finite floats become the strings 'inf', '-inf', 'nan'."""
    return json_value(obj, non_finite_as_text=True)


#: Inverse of :func:`encode_floats` for numeric lists (strings are kept in other places).
decode_floats = from_json_value


def tree_to_dict(tree: Tree) -> dict:
    """A tree as the model file holds it (format :data:`TREE_FORMAT`)."""
    out = {"tree_format": TREE_FORMAT}
    links = binary_links(tree)
    written = [n for n in ARRAY_FIELDS if links is None or n not in EDGE_FIELDS]
    out.update({name: encode_floats(getattr(tree, name)) for name in written})
    if links is not None:
        for name, values in zip(LINK_FIELDS, links, strict=True):
            if values is not None:
                out[name] = encode_floats(values)
    out["n_features"] = int(tree.n_features)
    out["questions"] = [q.name for q in tree.questions]
    out["node_fields"] = {k: encode_floats(np.asarray(v)) for k, v in tree.node_fields.items()}
    out["component_state"] = encode_floats(tree.component_state)
    return out


def tree_from_dict(payload: dict, resolve_question) -> Tree:
    """Read :func:`tree_to_dict`'s output (format 3, or formats 1 and 2, converted).
    Question kinds are looked up by name with ``resolve_question`` (the caller's registry:
    the engine is given one, it never fetches the process-wide one)."""
    if not isinstance(payload, dict):
        raise ValueError("tree payload must be a JSON object")
    if "class_sums" in payload and "statistics" not in payload:
        # formats 1 and 2 named the node sums after the only target they knew
        payload = {**payload, "statistics": payload["class_sums"]}
        del payload["class_sums"]
    if payload.get("tree_format") == 4 and "child_start" not in payload:
        payload = _links_to_children(payload)
    elif "children_left" in payload and "child_start" not in payload:
        payload = _format1_to_format2(payload)
    missing = [name for name in ARRAY_FIELDS if name not in payload]
    if missing:
        raise ValueError(f"tree payload lacks the fields {missing}")
    arrays = {name: _read_array(payload, name, dtype) for name, dtype in ARRAY_FIELDS.items()}
    n = _node_count(arrays)
    if n > MAX_NODES:
        raise ValueError(f"tree has {n} nodes; model files may hold at most {MAX_NODES}")
    for name in ("statistics", "value"):
        if arrays[name].ndim != 2 or arrays[name].shape[0] != n:
            raise ValueError(f"tree field {name!r} must be {n} rows of numbers (one per node)")
    n_features = payload.get("n_features")
    if not isinstance(n_features, int) or isinstance(n_features, bool) or n_features < 1:
        raise ValueError("tree field 'n_features' must be a positive integer")
    if n_features > MAX_FEATURES:
        # what a kernel or a report sizes by (node boxes are n_nodes x n_features)
        raise ValueError(
            f"tree field 'n_features' is {n_features}; model files may hold at most "
            f"{MAX_FEATURES} features"
        )
    node_fields = payload.get("node_fields", {})
    if not isinstance(node_fields, dict):
        raise ValueError("tree field 'node_fields' must be an object (name -> per-node values)")
    state = payload.get("component_state", {})
    if not isinstance(state, dict) or not all(isinstance(v, dict) for v in state.values()):
        raise ValueError(
            "tree field 'component_state' must be an object of objects (kind -> state)"
        )
    names = payload.get("questions", ["threshold"])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError("tree field 'questions' must be a list of question kind names")
    resolve = resolve_question
    tree = Tree(
        **arrays,
        n_features=n_features,
        questions=tuple(resolve(name) for name in names),
        node_fields={
            str(name): _read_node_field(name, values, n) for name, values in node_fields.items()
        },
        component_state=_decode_state(state),
    )
    tree.check_structure()
    return tree


#: Size cap of a model file's tree (a crafted file must not exhaust memory).
MAX_NODES = 10**8
#: Features a model file's tree may name (numpy's own cap on array dimensions is far
#: above; a tree fitted on more columns than this is no tree a file should hold).
MAX_FEATURES = 10**7


def _read_node_field(name, values, n: int) -> np.ndarray:
    """A per-node field as a float64 array of n rows (a number per node, or a row of
    numbers per node); anything else (null, strings, booleans, ragged or deeper nesting)
    is refused here, naming the field, so no component meets it unconverted."""
    decoded = decode_floats(values)
    if not isinstance(decoded, list):
        raise ValueError(f"tree node field {name!r} must be a list with one entry per node")
    nested = any(isinstance(v, list) for v in decoded)
    if nested and not all(isinstance(v, list) for v in decoded):
        raise ValueError(
            f"tree node field {name!r} mixes numbers and rows; a number per node or a row "
            "per node is expected"
        )
    for value in (v for row in decoded for v in row) if nested else decoded:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ValueError(
                f"tree node field {name!r} holds {type(value).__name__} "
                f"{str(value)[:40]!r}; numbers are expected"
            )
    try:
        array = np.asarray(decoded, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(
            f"tree node field {name!r} must hold a number per node or rows of equal length"
        ) from None
    if array.ndim not in (1, 2) or array.shape[0] != n:
        raise ValueError(
            f"tree node field {name!r} has shape {array.shape}; expected ({n},) or ({n}, width)"
        )
    return array


def _node_count(arrays) -> int:
    """The number of nodes most per-node fields agree on; a field that disagrees is the
    corrupt one and is named."""
    lengths = {
        name: values.shape[0] if values.ndim else -1
        for name, values in arrays.items()
        if name not in ("child_ids", "child_shares")
    }
    lengths["child_start"] -= 1
    counts = {}
    for length in lengths.values():
        counts[length] = counts.get(length, 0) + 1
    n = max(counts, key=counts.get)
    for name, length in lengths.items():
        if length != n:
            expected = f"{n + 1} (n_nodes + 1)" if name == "child_start" else f"{n} (one per node)"
            found = length + 1 if name == "child_start" else length
            raise ValueError(f"tree field {name!r} has {found} entries, expected {expected}")
    return n


def _read_array(payload, name, dtype):
    """A tree field as an array of ``dtype``; integer fields must hold integers (a float
    index such as 1.5 is refused, not truncated)."""
    try:
        values = np.asarray(decode_floats(payload[name]), dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"tree field {name!r} is not an array of numbers") from None
    dimensions = 2 if name in ("statistics", "value") else 1
    if values.ndim != dimensions:
        shape = "a list of rows of numbers" if dimensions == 2 else "a list of numbers"
        raise ValueError(f"tree field {name!r} must be {shape}, got {values.ndim} dimension(s)")
    if dtype is np.int64:
        if not np.isfinite(values).all() or (values != np.round(values)).any():
            raise ValueError(f"tree field {name!r} must hold integers")
        if values.size and np.abs(values).max() > 2**62:
            raise ValueError(f"tree field {name!r} holds an integer out of range")
    return values.astype(dtype)


def _links_to_children(payload: dict) -> dict:
    """Tree format 4's binary links (:data:`LINK_FIELDS`) as format 3's child lists, the
    links checked before anything indexes with them: every entry -1 or a node id, -1 in
    both at the same nodes, one share per internal node."""
    for name in ("children_left", "children_right", "weight"):
        if name not in payload:
            raise ValueError(f"tree payload lacks the field {name!r}")
    left = _read_array(payload, "children_left", np.int64)
    right = _read_array(payload, "children_right", np.int64)
    weight = _read_array(payload, "weight", np.float64)
    n = left.shape[0]
    if right.shape != left.shape or weight.shape != left.shape:
        raise ValueError(
            "tree fields 'children_left', 'children_right' and 'weight' must hold one entry "
            "per node each"
        )
    if ((left < -1) | (left >= n) | (right < -1) | (right >= n)).any():
        raise ValueError(
            "tree fields 'children_left' / 'children_right' must hold -1 (a leaf) or a node id"
        )
    if ((left < 0) != (right < 0)).any():
        node = int(np.flatnonzero((left < 0) != (right < 0))[0])
        raise ValueError(
            f"tree fields 'children_left' / 'children_right': node {node} has one child; "
            "a binary node has two, a leaf -1 in both"
        )
    n_internal = int((left >= 0).sum())
    shares = {}
    for name in ("left_shares", "right_shares"):
        if name in payload:
            shares[name] = _read_array(payload, name, np.float64)
            if shares[name].shape != (n_internal,):
                raise ValueError(
                    f"tree field {name!r} must hold one share per internal node ({n_internal})"
                )
            if not (np.isfinite(shares[name]).all() and (np.abs(shares[name] - 0.5) <= 0.5).all()):
                raise ValueError(f"tree field {name!r} must hold shares in [0, 1]")
    start, ids, child_shares = children_from_links(
        left, right, shares.get("left_shares"), shares.get("right_shares"), weight
    )
    out = {k: v for k, v in payload.items() if k not in LINK_FIELDS}
    # arrays, not lists: the reader takes them as they are (no Python object per node)
    out.update(child_start=start, child_ids=ids, child_shares=child_shares)
    return out


def _format1_to_format2(payload: dict) -> dict:
    """Format 1 (binary trees; question codes 0/1/2 in node_fields['question'], NaN =
    threshold; the share of missing values in node_fields['missing_left'], NaN = 0.5)."""
    for name in ("children_left", "children_right", "statistics"):
        if name not in payload:
            raise ValueError(f"tree payload lacks the field {name!r}")
    left = np.asarray(decode_floats(payload["children_left"]), dtype=np.int64)
    right = np.asarray(decode_floats(payload["children_right"]), dtype=np.int64)
    if left.shape != right.shape or left.ndim != 1:
        raise ValueError("tree fields 'children_left' / 'children_right' differ in shape")
    n = left.shape[0]
    fields = {k: np.asarray(decode_floats(v)) for k, v in payload.get("node_fields", {}).items()}
    internal = left >= 0
    codes = np.asarray(fields.pop("question", np.full(n, np.nan)), dtype=np.float64)
    codes = np.where(np.isnan(codes), 0, codes)
    if codes.shape != (n,) or not np.isin(codes, (0, 1, 2)).all():
        raise ValueError("tree node field 'question' holds codes other than 0, 1, 2")
    used = sorted({int(c) for c in codes[internal]} | {0})
    index = {code: i for i, code in enumerate(used)}
    question = np.where(internal, [index.get(int(c), 0) for c in codes], LEAF)
    share = np.asarray(fields.pop("missing_left", np.full(n, 0.5)), dtype=np.float64)
    if share.shape != (n,):
        raise ValueError("tree node field 'missing_left' does not have one row per node")
    share = np.where(np.isnan(share), 0.5, share)
    out = dict(payload)
    del out["children_left"], out["children_right"]
    ids = np.column_stack([left, right])[internal].reshape(-1)
    out["child_start"] = np.concatenate([[0], np.cumsum(np.where(internal, 2, 0))]).tolist()
    out["child_ids"] = ids.tolist()
    out["child_shares"] = np.column_stack([share, 1 - share])[internal].reshape(-1).tolist()
    out["question"] = question.tolist()
    out["questions"] = [_FORMAT1_QUESTIONS[code] for code in used]
    out["node_fields"] = {k: encode_floats(v) for k, v in fields.items()}
    return out


def _decode_state(state):
    if isinstance(state, dict):
        return {k: _decode_state(v) for k, v in state.items()}
    if isinstance(state, list):
        decoded = decode_floats(state)
        try:
            return np.asarray(decoded, dtype=np.float64)
        except (TypeError, ValueError):
            return decoded
    return state


def read_tree(
    payload: dict,
    composition,
    labels,
    where: str = "model file: tree",
    stateful=("pruner", "evaluator", "confidence", "target"),
):
    """The tree, checked (its structure, then its statistics by the composition's target
    with the model's ``labels``), its values and decisions recomputed by the target, its
    component state checked by the components named in ``stateful`` (a grown tree, before
    pruning, has none)."""

    tree_payload = field(payload, "tree", dict)
    try:
        tree = tree_from_dict(
            tree_payload, lambda name: composition.registry.create("question", name)
        )
    except ValueError as exc:
        raise ModelFileError(f"{where}: {exc}") from None
    try:
        composition.target.check_tree(tree, labels)
        adopt_outputs(composition, labels, tree.statistics[:1])  # several outputs' criterion
    except ValueError as exc:
        raise ModelFileError(f"{where}: {exc}") from None
    _check_impurity(tree, composition.criterion, where)
    state = tree.component_state
    if not isinstance(state, dict):
        raise ModelFileError(f"{where}: 'component_state' must be an object")
    # values and decisions are recomputed, never read
    tree.relabel(composition.target, composition.labeler)
    for kind in stateful:
        try:
            getattr(composition, kind).check_state(state.get(kind, {}), tree)
        except ValueError as exc:
            raise ModelFileError(str(exc)) from None
    return tree


#: How far a file's node impurity may stray from what its statistics give: a fitted tree's
#: are the criterion's own values (equal to the last bit); this allows a file another
#: build wrote.
IMPURITY_TOLERANCE = 1e-9


def _check_impurity(tree, criterion, where: str) -> None:
    """Every node's impurity must be what the criterion gives its statistics and weight
    (importances and impurity-based pruning read it): an edited one would make
    ``feature_importances_`` negative or NaN."""
    impurity = criterion.compiled_impurity()
    statistics = np.ascontiguousarray(tree.statistics, dtype=np.float64)
    params = criterion.impurity_params(statistics.shape[1])
    weight = tree.weight
    for node in range(tree.n_nodes):
        expected = impurity(statistics[node], float(weight[node]), params)
        stored = tree.impurity[node]
        if not abs(stored - expected) <= IMPURITY_TOLERANCE * (abs(expected) + 1e-12):
            raise ModelFileError(
                f"{where}: field 'impurity' is {float(stored)!r} at node {node}, but its "
                f"statistics and weight give {float(expected)!r} (criterion "
                f"{criterion.name!r})"
            )


def _check_constraints(model, trees, names, grown=None) -> None:
    """The constraints the file's parameters name, resolved against its features, and
    kept by every tree it holds (``engine.constraints.check_tree_constraints``), the grown
    tree that ``prune`` starts from (``grown``) too."""
    try:
        constraints = resolve_constraints(
            getattr(model, "monotonic_cst", None),
            getattr(model, "interaction_cst", None),
            model.n_features_in_,
            names,
        )
    except ValueError as exc:
        raise ModelFileError(f"model file: 'params': {exc}") from None
    model.composition_.constraints = constraints
    for index, tree in enumerate(trees):
        try:
            check_tree_constraints(tree, constraints, model.composition_.target)
        except ValueError as exc:
            where = "tree" if len(trees) == 1 else f"trees[{index}]"
            raise ModelFileError(f"model file: {where}: {exc}") from None
    if grown is not None:
        try:
            check_tree_constraints(grown, constraints, model.composition_.target)
        except ValueError as exc:
            raise ModelFileError(f"model file: grown_tree: {exc}") from None


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


MODEL_FORMAT = "treekit-model"


#: 4: trees of format 4 (a treekit reading 3 would take their links for format 1's)
MODEL_VERSION = 4


def check_header(payload: dict, estimator: str) -> None:
    """The model file's format, version and estimator."""
    if payload.get("format") != MODEL_FORMAT:
        raise ValueError("not a treekit model: the JSON lacks format='treekit-model'")
    if payload.get("version") not in READABLE_MODEL_VERSIONS:
        raise ValueError(
            f"unsupported treekit model version {payload.get('version')!r}; this treekit "
            f"reads versions {', '.join(map(str, READABLE_MODEL_VERSIONS))}"
        )
    found = payload.get("estimator", "TreeClassifier")
    if found != estimator:
        raise ValueError(f"model file holds a {found!r}, not a {estimator!r}")


#: Model versions this treekit reads (version 1: binary trees with question codes; version
#: 2: no target kind, node sums named ``class_sums``; both converted; version 3: trees of
#: format 3, child lists for every tree).
READABLE_MODEL_VERSIONS = (1, 2, 3, 4)


def classes_payload(classes) -> dict:
    """The file's ``classes`` and ``classes_dtype``: the labels and their dtype, a list of
    each per output for several outputs, ``"classes": null`` for none."""
    if classes is None:
        return {"classes": None}
    if isinstance(classes, list):
        return {
            "classes": [c.tolist() for c in classes],
            "classes_dtype": [c.dtype.str for c in classes],
        }
    return {"classes": classes.tolist(), "classes_dtype": classes.dtype.str}


def header_payload(model) -> dict:
    """What every model file opens with: format, version, estimator, classes, feature
    names (and column keys), the composition, whether fit met a missing value, the
    parameters."""
    return {
        "format": MODEL_FORMAT,
        "version": MODEL_VERSION,
        "estimator": type(model).__name__,
        **classes_payload(getattr(model, "classes_", None)),
        "feature_names": list(model.feature_names_in_)
        if hasattr(model, "feature_names_in_")
        else None,
        **(
            {"column_keys": model._column_keys}
            if getattr(model, "_column_keys", None) is not None
            else {}
        ),
        "composition": model.composition_.describe(),
        "missing_at_fit": bool(getattr(model, "missing_at_fit_", True)),
        "params": model._json_params(),
    }


class ModelFile:
    """Saving and loading: ``to_json`` and ``from_json`` (the format is this module's)."""

    # -- JSON -----------------------------------------------------------------------
    def to_json(self, path=None, leaf_responses: bool = False) -> str:
        """Serialise the fitted model to JSON (written to ``path`` when given). With
        ``leaf_responses`` a regressor's file also holds every leaf's training responses
        and their weights, so the loaded model predicts quantiles (the file grows by about
        16 bytes per training row and tree; off by default)."""
        self._check_fitted()
        kept = None
        if leaf_responses:
            kept = getattr(self, "_leaf_responses", None)
            if kept is None:
                raise ValueError(
                    "leaf_responses=True: this model holds no leaf responses (a classifier, "
                    "a target without responses, or a model read from a file without them)"
                )
        payload = {
            **header_payload(self),
            **(
                {"reject_threshold": encode_floats(self.reject_threshold_)}
                if hasattr(self, "reject_threshold_")
                else {}
            ),
            **(
                {"calibration": self.calibration_.to_dict()}
                if getattr(self, "calibration_", None) is not None
                else {}
            ),
            "categories": [
                [int(j), levels] for j, levels in getattr(self, "categories_", {}).items()
            ],
            **self._trees_payload(),
            **({"leaf_responses": leaf_responses_payload(kept)} if kept is not None else {}),
            **conformal_rows_payload(self),
            **({"fitted": self._fitted_numbers()} if self._fitted_numbers() else {}),
        }
        text = json.dumps(payload)
        if path is not None:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
        return text

    def _fitted_numbers(self) -> dict:
        """Numbers a family learns at fit beyond the trees (an isolation forest's offset),
        name -> number, kept in the file's ``fitted``; none by default."""
        return {}

    def _read_fitted_numbers(self, numbers_read: dict) -> None:
        """Set what :meth:`_fitted_numbers` wrote (checked finite numbers, the names it
        writes). Called by the reader."""
        raise ModelFileError(
            f"model file: 'fitted' holds numbers a {type(self).__name__} does not learn"
        )

    def _json_params(self) -> dict:
        """Constructor parameters as JSON; a component given as an instance is stored as
        its name and parameters."""
        params = self.get_params(deep=False)
        for kind in (kind for kind in KINDS if kind in params):  # a regressor has no labeler
            component = params[kind]
            if component is not None and not isinstance(component, str):
                params[kind] = component.name
                params[f"{kind}_params"] = component.get_params() or None
        if not isinstance(params["random_state"], (int, type(None))):
            params["random_state"] = None
        if params.get("categorical_features") is not None:  # one index, a list or an array
            params["categorical_features"] = np.atleast_1d(
                np.asarray(params["categorical_features"], dtype=object)
            )
        if isinstance(params.get("reject"), RejectRule):
            params["reject"] = attrs.asdict(params["reject"])
        if params.get("calibration") is not None and not isinstance(
            params["calibration"], (str, dict)
        ):
            params["calibration"] = attrs.asdict(params["calibration"])
        return json_value(params)

    @classmethod
    def _from_json_params(cls, params: dict):
        """The estimator with a model file's parameters and its composition, every
        parameter checked as fit checks it; a parameter this version does not know (a file
        from a newer treekit) or a value fit would refuse is a ModelFileError naming it."""

        unknown = sorted(set(params) - set(cls._param_names()))
        if unknown:
            raise ModelFileError(
                f"model file: 'params' holds {', '.join(map(repr, unknown))}, which this "
                f"version of {cls.__name__} does not know (was the file written by a newer "
                "treekit?)"
            )
        try:
            model = cls(**params)
            model._check_params()
            model.composition_ = model._make_composition()
        except (PluginError, CompositionError):
            raise  # a component not installed, or components that do not fit: said as such
        except (TypeError, ValueError) as exc:
            raise ModelFileError(f"model file: 'params': {exc}") from None
        return model

    def _read_decision_rules(self, payload) -> None:
        """The decision rules of a model file: a family that decides among no classes has
        none (files written before the families held a null threshold; accepted)."""
        for name in ("reject_threshold", "calibration"):
            if payload.get(name) is not None:
                raise ModelFileError(
                    f"model file: {name!r} is for classifiers; a {type(self).__name__} "
                    "decides among no classes (null or absent expected)"
                )

    @classmethod
    def from_json(cls, text_or_path):
        """Load a model written by :meth:`to_json`. Every field is checked before anything
        runs on it (this module); executes no code from the file:
        components are looked up by name in the registry."""

        payload = read_json(text_or_path)
        check_header(payload, cls.__name__)
        model = cls._from_json_params(field(payload, "params", dict))
        labels = read_classes(payload)
        try:  # the composition _from_json_params made, for the file's labels
            composition_for_labels(model.composition_, labels)
        except CompositionError as exc:
            raise ModelFileError(f"model file: 'classes': {exc}") from None
        target = model.composition_.target
        try:  # a regressor's or survival model's parameters name a target
            model._check_target(model.composition_)
        except ValueError as exc:
            raise ModelFileError(f"model file: 'params': {exc}") from None
        if labels is not None and not target.predicts_labels():
            raise ModelFileError(
                f"model file: 'classes' must be null: target {target.name!r} predicts values, "
                "not labels"
            )
        if labels is None and target.predicts_labels():
            raise ModelFileError(
                f"model file: 'classes' is null, but target {target.name!r} decides among "
                "labels: a list of labels is expected"
            )
        if isinstance(labels, list):
            model.classes_, model.n_classes_ = labels, [len(c) for c in labels]
        elif labels is not None:
            model.classes_ = labels
            model.n_classes_ = int(labels.shape[0])
        trees = model._read_trees(payload, model.composition_, labels)
        model.n_features_in_ = trees[0].n_features
        model.categories_ = read_categories(payload, model.n_features_in_)
        model._read_decision_rules(payload)
        names = payload.get("feature_names")
        if names is not None:
            if (
                not isinstance(names, list)
                or len(names) != model.n_features_in_
                or not all(isinstance(n, str) for n in names)
            ):
                raise ModelFileError(
                    f"model file: 'feature_names' must list {model.n_features_in_} names (strings)"
                )
            model.feature_names_in_ = np.asarray(names, dtype=object)
        seen = payload.get("missing_at_fit", True)  # files before it: assume so
        if not isinstance(seen, bool):
            raise ModelFileError("model file: 'missing_at_fit' must be true or false")
        model.missing_at_fit_ = seen
        grown = getattr(model, "_grown_tree", None)  # what prune() starts from
        _check_constraints(model, trees, names, grown)
        if "leaf_responses" in payload:
            if not hasattr(model, "_quantiles"):
                raise ModelFileError(
                    f"model file: 'leaf_responses' is for regressors; a {cls.__name__} "
                    "predicts no quantiles"
                )
            model._leaf_responses = read_leaf_responses(payload["leaf_responses"], trees)
        if "conformal_rows" in payload:
            model._conformal_rows = read_conformal_rows(payload["conformal_rows"], model)
        if "fitted" in payload:
            model._read_fitted_numbers(read_fitted_numbers(payload["fitted"], model))
        keys = payload.get("column_keys")
        if keys is not None:
            if (
                not isinstance(keys, list)
                or len(keys) != model.n_features_in_
                or not all(isinstance(k, (int, str)) and not isinstance(k, bool) for k in keys)
            ):
                raise ModelFileError(
                    f"model file: 'column_keys' must list {model.n_features_in_} column labels "
                    "(integers or strings)"
                )
            model._column_keys = keys
        return model


def read_fitted_numbers(payload, model) -> dict:
    """The file's ``fitted`` numbers, checked: an object of finite numbers with the names
    the model's family writes (:meth:`ModelFile._fitted_numbers` of a fitted one)."""
    expected = set(getattr(type(model), "FITTED_NUMBERS", ()))
    if not isinstance(payload, dict) or set(payload) != expected:
        raise ModelFileError(
            f"model file: 'fitted' must be an object with {sorted(expected)} for a "
            f"{type(model).__name__}"
        )
    numbers_read = {}
    for name, value in payload.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise ModelFileError(f"model file: 'fitted'.{name} must be a finite number")
        numbers_read[name] = value
    return numbers_read


def conformal_rows_payload(model) -> dict:
    """``{"conformal_rows": {"X": rows, "y": labels}}`` of a model that keeps conformal
    rows (X as prediction reads it: checked and encoded; y a regressor's numbers or a
    classifier's positions in ``classes``), else ``{}``."""
    rows = getattr(model, "_conformal_rows", None)
    if rows is None:
        return {}
    X_c, y_c = rows
    return {"conformal_rows": {"X": encode_floats(X_c.tolist()), "y": encode_floats(y_c.tolist())}}


def read_conformal_rows(payload, model) -> tuple:
    """The conformal rows of a model file, checked: X a list of rows of ``n_features_in_``
    numbers (NaN: missing), y one label per row (finite numbers for a regressor,
    positions in ``classes`` for a classifier)."""
    where = "model file: 'conformal_rows'"
    if not hasattr(model, "_conformal_labels"):
        raise ModelFileError(f"{where}: a {type(model).__name__} makes no intervals or sets")
    if not isinstance(payload, dict) or set(payload) != {"X", "y"}:
        raise ModelFileError(f"{where} must be an object with X and y")
    try:
        X = np.array(decode_floats(payload["X"]), dtype=np.float64)
        y = np.array(decode_floats(payload["y"]), dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelFileError(f"{where}: X and y must hold numbers") from None
    if X.ndim != 2 or X.shape[1] != model.n_features_in_ or X.shape[0] < 1:
        raise ModelFileError(
            f"{where}.X must be rows of {model.n_features_in_} numbers, at least one row"
        )
    if np.isinf(X).any():
        raise ModelFileError(f"{where}.X must hold finite numbers (NaN: missing)")
    if y.shape != (X.shape[0],) or not np.isfinite(y).all():
        raise ModelFileError(f"{where}.y must hold one finite number per row of X")
    classes = getattr(model, "classes_", None)
    if classes is not None:
        if not (np.array_equal(y, np.round(y)) and (y >= 0).all() and (y < len(classes)).all()):
            raise ModelFileError(
                f"{where}.y must hold positions in classes (0..{len(classes) - 1})"
            )
        y = y.astype(np.int64)
    return X, y


def leaf_responses_payload(members) -> dict:
    """The kept leaf responses: the training response column the trees share (null where
    each tree holds its own values, as a Dask fit's do) and per tree, grouped by node
    (``starts``: entry offsets, one per node and one past the last), each entry's row of
    the column or its value, and its weight (null where all are 1)."""
    shared = members[0].responses if all(m.rows is not None for m in members) else None
    if shared is not None and any(m.responses is not shared for m in members):
        shared = None  # (never so today: in-memory trees share one column)
    trees = []
    for member in members:
        rows = None if shared is None else np.asarray(member.rows, dtype=np.int64)
        values = None
        if shared is None:
            values = member.responses if member.rows is None else member.responses[member.rows]
        trees.append(
            {
                "rows": None if rows is None else rows.tolist(),
                "values": None if values is None else encode_floats(values.tolist()),
                "weights": None if member.shares is None else member.shares.tolist(),
                "starts": np.asarray(member.starts, dtype=np.int64).tolist(),
            }
        )
    return {"responses": None if shared is None else encode_floats(shared.tolist()), "trees": trees}


def read_leaf_responses(payload, trees) -> list:
    """The leaf responses of a model file, each field checked before any prediction reads
    it: ``responses`` null or finite numbers (a row of one per output for a model of
    several, as many as its node values); one entry per tree, ``starts``
    non-decreasing from 0 with one offset per node and one more; per entry a row of
    ``responses`` (``rows``) or a finite value (``values``), and a weight >= 0 (``weights``
    null: 1)."""
    if not isinstance(payload, dict) or set(payload) != {"responses", "trees"}:
        raise ModelFileError("model file: 'leaf_responses' must be an object with responses, trees")
    try:
        shared = payload["responses"]
        shared = None if shared is None else np.asarray(decode_floats(shared), dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ModelFileError("model file: 'leaf_responses'.responses must be numbers") from None
    if shared is not None and (shared.ndim not in (1, 2) or not np.isfinite(shared).all()):
        raise ModelFileError("model file: 'leaf_responses'.responses must be finite numbers")
    # several outputs: a row of responses per training row, one per output (node value)
    if (
        shared is not None
        and shared.ndim == 2
        and not 2 <= shared.shape[1] == trees[0].value.shape[1]
    ):
        raise ModelFileError(
            f"model file: 'leaf_responses'.responses holds {shared.shape[1]} outputs per row; "
            f"the trees hold {trees[0].value.shape[1]}"
        )
    entries = payload["trees"]
    if not isinstance(entries, list) or len(entries) != len(trees):
        raise ModelFileError(
            f"model file: 'leaf_responses'.trees must hold one entry per tree ({len(trees)})"
        )
    members = []
    for k, (entry, tree) in enumerate(zip(entries, trees, strict=True)):
        where = f"model file: 'leaf_responses'.trees[{k}]"
        if not isinstance(entry, dict) or set(entry) != {"rows", "values", "weights", "starts"}:
            raise ModelFileError(f"{where} must be an object with rows, values, weights, starts")
        with_rows = entry["rows"] is not None and entry["values"] is None and shared is not None
        with_values = entry["rows"] is None and entry["values"] is not None and shared is None
        if not (with_rows or with_values):
            raise ModelFileError(
                f"{where}: rows (into the shared responses) or values (without them), not both"
            )
        try:
            starts = np.asarray(entry["starts"], dtype=np.int64)
            rows = None if entry["rows"] is None else np.asarray(entry["rows"], dtype=np.int64)
            values = (
                None
                if entry["values"] is None
                else np.asarray(decode_floats(entry["values"]), dtype=np.float64)
            )
            weights = entry["weights"]
            weights = None if weights is None else np.asarray(weights, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            raise ModelFileError(
                f"{where}: starts, rows, values and weights must be numbers"
            ) from None
        if starts.shape != (tree.n_nodes + 1,) or starts[0] != 0 or (np.diff(starts) < 0).any():
            raise ModelFileError(
                f"{where}.starts must be {tree.n_nodes + 1} non-decreasing offsets from 0"
            )
        n = int(starts[-1])
        if rows is not None and (
            rows.shape != (n,) or (rows.size and (rows.min() < 0 or rows.max() >= shared.shape[0]))
        ):
            raise ModelFileError(f"{where}.rows must be {n} rows of the shared responses")
        if values is not None and (values.shape != (n,) or not np.isfinite(values).all()):
            raise ModelFileError(f"{where}.values must be {n} finite numbers")
        if weights is not None and (
            weights.shape != (n,) or not np.isfinite(weights).all() or (weights < 0).any()
        ):
            raise ModelFileError(f"{where}.weights must be null or {n} finite numbers >= 0")
        if rows is None:
            members.append(LeafMembers(values, None, weights, starts))
        else:
            members.append(LeafMembers(shared, rows.astype(np.int32), weights, starts))
    return members
