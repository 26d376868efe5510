"""What the components that read the target's rows (criterion, labeler) share."""

from __future__ import annotations

from typing import ClassVar

import numpy as np


def one_hot(encoded: np.ndarray, n_classes: int) -> np.ndarray:
    """One-hot evidence rows for class indices."""
    evidence = np.zeros((encoded.shape[0], n_classes))
    evidence[np.arange(encoded.shape[0]), encoded] = 1.0
    return evidence


#: The kinds of rows the core's targets write (a component's ``evidence``), and what a row
#: holds. A node's statistics are the weighted sums of its rows (a target may summarise
#: rows otherwise: ``Target.summarises_rows``). A plugin's target names its own kind (the
#: counterexamples plugin: ``counterexamples``, 1 where a sample is known not to be a
#: class) and documents it in its README.
EVIDENCE_KINDS = {
    "one_hot": "a class label as a one-hot row (K columns, one per class); targets class_labels",
    "moments": "a number y as (y, y^2), a pair per output for several (y_1, y_1^2, y_2, "
    "y_2^2, ...): sums give a node's means and squared errors; target mean",
    "median_summaries": "a number y; a node's statistics are its weighted median and "
    "absolute deviation from it, which no sum gives; target median",
    "poisson_moments": "a count y as (y, y log y), a pair per output for several: sums give "
    "the Poisson deviance; target poisson_mean",
    "events_time": "rpart's Poisson rows (events, time, events log(events / time)); targets "
    "rpart_poisson and rpart_exponential (its time rescaled)",
    "event_time": "censored follow-up as (event 1/0, time); target survival (log-rank)",
    "row_count": "no response: every row is 1, so a node's sum counts its rows; target "
    "isolation (isolation forests)",
    "newton_moments": "a loss's gradient g and hessian h at a row's raw prediction as (-g, h, "
    "g^2 / h): sums give a node's Newton step and gain (boosting writes them every round; "
    "from a y, squared error's at 0: (y, 1, y^2)); target newton_step",
    "treatment_moments": "a binary treatment d and outcome y as (d, y, d y, y^2, d y^2, w, "
    "w^2, w y), w = d minus the row's propensity (d where none is given): sums give the arms' "
    "means and variances and the effect's slope; target treatment_effect",
}


class ReadsEvidence:
    """Mixin of the kinds that read the rows the target writes (criterion and labeler).

    Node statistics are weighted sums of those rows; the target writes them
    (:meth:`treekit_core.components.Target.encode`), and the components that read them say
    which kind of row they understand.
    """

    evidence: ClassVar[str] = "one_hot"
    """The kind of rows this component reads: one of :data:`EVIDENCE_KINDS` (``"one_hot"``:
    a class label is a one-hot row) or another kind a target defines
    (``"counterexamples"``). Read at fit: it must be the target's kind (the labeler's only
    when the target decides with the labeler)."""
