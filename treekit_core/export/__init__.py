"""Fitted treekit models in other tools' formats.

- :func:`to_sklearn`: a fitted ``DecisionTreeClassifier`` (``plot_tree``,
  ``export_graphviz`` and everything else built for scikit-learn trees);
- :func:`to_shap`: the dict model ``shap.TreeExplainer`` accepts;
- :func:`to_onnx`: an ONNX ``TreeEnsembleClassifier`` (ai.onnx.ml opset 3);
- :func:`dtreeviz_model`: a ``dtreeviz`` model of a tree;
- :func:`export_text`, :func:`export_dot`: treekit's own text and graphviz output.

Each needs its tool (``pip install treekit-core[export]``), imported only when called. A
composition a format cannot express raises :class:`NotExportableError`, saying what; a
sample with a missing value follows the larger branch where treekit splits it by training
shares (``missing=``: "warn", the default, says so once; "larger_share"; "error").
"""

from treekit_core.estimators.text import export_dot, export_text
from treekit_core.export.dtreeviz_adapter import dtreeviz_model
from treekit_core.export.hard_trees import MissingValueExportWarning, NotExportableError
from treekit_core.export.onnx_model import to_onnx
from treekit_core.export.shap_model import to_shap
from treekit_core.export.sklearn_tree import to_sklearn

__all__ = [
    "MissingValueExportWarning",
    "NotExportableError",
    "dtreeviz_model",
    "export_dot",
    "export_text",
    "to_onnx",
    "to_shap",
    "to_sklearn",
]
