"""scikit-learn's exception and warning classes, without importing scikit-learn.

treekit does not depend on scikit-learn at run time, yet code written for scikit-learn
catches ``sklearn.exceptions.NotFittedError`` and filters ``DataConversionWarning``. A
process that catches or filters those classes has imported ``sklearn.exceptions``; so when
that module is loaded, treekit raises a class that is both its own and scikit-learn's, and
otherwise only its own. Nothing here imports scikit-learn.
"""

from __future__ import annotations

import functools
import sys


@functools.cache
def _joined(own: type, sklearn_name: str) -> type:
    theirs = getattr(sys.modules["sklearn.exceptions"], sklearn_name)
    return type(own.__name__, (own, theirs), {"__module__": own.__module__})


def as_sklearn(own: type, sklearn_name: str) -> type:
    """``own``, or a subclass of both ``own`` and ``sklearn.exceptions.<sklearn_name>``
    when scikit-learn's exceptions module is loaded in this process."""
    if "sklearn.exceptions" not in sys.modules:
        return own
    return _joined(own, sklearn_name)
