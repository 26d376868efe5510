"""The errors the estimators raise beyond ValueError (defined in the contract)."""

from treekit_core.components.errors import AbstentionError, NotFittedError

__all__ = ["AbstentionError", "NotFittedError"]
