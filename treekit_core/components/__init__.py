"""The component contracts: one base class per kind, every member declared here.

This package is the one place that declares every extension point a component has, with
its default and when the core calls it. A component subclasses one of these bases (see
the README's "Writing a plugin"). The core reads nothing else from a component: no
``getattr`` probing, no type or name tests.

Compatibility is declared, not discovered by failure: ``provides`` is a set of
capabilities a component offers, ``requires`` maps another kind to the capabilities it
needs from that kind's component; the composition check refuses a composition that does
not meet them, naming both components and the capability (:data:`CAPABILITIES` says what
each means).
"""

from treekit_core.components.base import ABSTAIN, Component, json_value, state_array
from treekit_core.components.confidence import Confidence
from treekit_core.components.criterion import Criterion
from treekit_core.components.evaluator import Evaluator
from treekit_core.components.evidence import EVIDENCE_KINDS, ReadsEvidence, one_hot
from treekit_core.components.labeler import Labeler
from treekit_core.components.loss import ElementwiseLoss, Loss
from treekit_core.components.propagator import Propagator
from treekit_core.components.pruner import Pruner
from treekit_core.components.question import MISSING_BRANCH, Question, QuestionTextContext
from treekit_core.components.splitter import (
    FEATURE_THRESHOLD,
    NODE_TEST_FIELDS,
    Split,
    Splitter,
    Unsplit,
)
from treekit_core.components.target import MonotoneValue, Target, TargetRows

#: Every component kind and its base class, in the order a tree is grown and used; the
#: target, which encodes y before growing and turns node statistics into predictions after,
#: is listed last.
KINDS = {
    "criterion": Criterion,
    "splitter": Splitter,
    "propagator": Propagator,
    "pruner": Pruner,
    "labeler": Labeler,
    "evaluator": Evaluator,
    "confidence": Confidence,
    "target": Target,
}

#: Every kind a plugin can register: the composition's kinds, the question kinds, which
#: are not chosen per composition (every splitter may ask any registered question), and
#: the losses, which a boosting estimator chooses (its trees are compositions of the rest).
REGISTERED_KINDS = {**KINDS, "question": Question, "loss": Loss}

#: The capabilities components declare in ``provides`` / ``requires``, and what each means.
CAPABILITIES = {
    "axis_aligned": "questions of the form x[feature] <= threshold, so leaf regions are boxes",
    "hard_routing": "every sample reaches exactly one leaf",
    "hard_routing_when_complete": "a sample missing no tested value reaches exactly one leaf, "
    "by the tree's own tests (a sample missing one may follow other tests: surrogate splits)",
    "crisp_labels": "each leaf decides one class or abstains",
    "fractional_weights": "non-integer sample weights",
    "soft_labels": "evidence rows that are not one-hot",
    "fused_builder": "a splitter that can grow the whole tree in one compiled call "
    "(Splitter.build_tree)",
    "hard_partition": "a propagator that sends each training row wholly to the child its "
    "answer names (a missing value: to both, by the node's missing share)",
    "split_scores": "a splitter whose search scores binary cuts with the criterion's split "
    "score (Criterion.split_score) where the criterion defines one",
    "binned_search": "a splitter that cuts between bins of each feature's values, as "
    "LightGBM's and HistGradientBoosting's searches: boosting's trees then grow by their "
    "rule, the Newton gain, for a loss that prefers it (Loss.prefers_newton_gain)",
    "surrogate_splits": "trees whose nodes carry rpart's surrogate splits (propagator and "
    "evaluator 'surrogate' need each other)",
    "absolute_deviation_search": "a splitter that scores cuts by the absolute deviations of "
    "each side from its weighted median, searched from the node's rows "
    "(Criterion.row_search)",
    "logrank_search": "a splitter that scores cuts by the log-rank statistic of the two "
    "children's follow-up, searched from the node's rows (Criterion.row_search)",
    "node_risk": "a target whose node statistics give the loss of a node's own prediction "
    "(Target.node_risk), which cost-complexity pruning minimises",
    "survival_curves": "a target whose fitted tree keeps each leaf's cumulative hazard and "
    "survival function (Target.fit_state), which survival estimators predict from: it "
    "defines hazard_curves, survival_curves, risk_scores and curve_steps (a leaf's curve as "
    "its jumps on the training grid, or None to be read dense)",
    "own_split_statistic": "a splitter that chooses features and cuts by a statistic of its "
    "own (a permutation test's), not the criterion's, so the criterion's needs of a split "
    "search do not apply (the criterion still measures nodes' impurity)",
    "stops_by_test": "a splitter whose growth stops where no split is significant (a "
    "permutation test's p-value: conditional inference), so its trees need no pruning: the "
    "command line then prunes none unless --pruner says",
    "influence": "a target that defines its response's influence function h(y) "
    "(Target.influence), which permutation tests correlate with a feature (conditional "
    "inference trees)",
    "class_decisions": "a target whose nodes decide among class labels, so a node's errors "
    "are the training rows of other classes (not a number predicted for a measurement)",
    "monotonic_constraints": "a splitter whose searches admit a cut on a constrained feature "
    "only where it keeps the node's value interval and order (kernels.growth.within_bounds "
    "with Node.constraint_signs and Node.value_limits)",
    "interaction_constraints": "a splitter that asks one feature per question, chosen among "
    "the node's candidate features (Node.features), so the grow loop's interaction "
    "constraints hold",
    "monotone_routing": "an evaluator whose routing of a sample at a node depends only on the "
    "feature that node asks about, sending larger values no less to the branch of larger "
    "values (hard routing, C4.5's missing shares, soft gates on thresholds): the mixture of "
    "leaves then keeps monotonic constraints",
}

__all__ = [
    "ABSTAIN",
    "CAPABILITIES",
    "EVIDENCE_KINDS",
    "FEATURE_THRESHOLD",
    "KINDS",
    "MISSING_BRANCH",
    "Component",
    "Confidence",
    "Criterion",
    "Evaluator",
    "Labeler",
    "ElementwiseLoss",
    "Loss",
    "Propagator",
    "Pruner",
    "Question",
    "QuestionTextContext",
    "REGISTERED_KINDS",
    "ReadsEvidence",
    "NODE_TEST_FIELDS",
    "Split",
    "Unsplit",
    "Splitter",
    "Target",
    "TargetRows",
    "MonotoneValue",
    "json_value",
    "one_hot",
    "state_array",
]
