"""Decision trees for uncertain measurements (Nunes et al., 2019) with their baselines.

Registers the splitter ``soft_search`` (SS), the propagator ``soft`` (STP), the evaluator
``soft`` (SE), UDT (splitter, propagator and evaluator ``udt``; Tsang et al.) and Quinlan's
probabilistic thresholds (evaluator ``quinlan_ramp``). See README.md for the equations.
"""

from treekit_core import hookimpl
from treekit_soft_search.quinlan_ramp import QuinlanRamp
from treekit_soft_search.soft_evaluation import SoftEvaluation
from treekit_soft_search.soft_propagation import SoftPropagation
from treekit_soft_search.soft_search import SoftSearch
from treekit_soft_search.udt import UDTEvaluation, UDTPropagation, UDTSplitter

#: The treekit plugin API this plugin is written for (see treekit_core's CHANGELOG.md).
TREEKIT_PLUGIN_API = 4


@hookimpl
def treekit_splitters():
    return [SoftSearch, UDTSplitter]


@hookimpl
def treekit_propagators():
    return [SoftPropagation, UDTPropagation]


@hookimpl
def treekit_evaluators():
    return [SoftEvaluation, QuinlanRamp, UDTEvaluation]
