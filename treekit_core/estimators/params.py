"""scikit-learn's parameter protocol without depending on scikit-learn at run time."""

from __future__ import annotations

import inspect


class ParamsMixin:
    """get_params / set_params from the constructor signature (as sklearn.BaseEstimator),
    and scikit-learn's tags."""

    #: scikit-learn's estimator type, which the tags carry ("classifier", "regressor" or
    #: None; ``is_classifier`` and ``is_regressor`` read it): set by each family.
    estimator_type = None

    @classmethod
    def _param_names(cls) -> list[str]:
        signature = inspect.signature(cls.__init__)
        return [
            p.name
            for p in signature.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]

    @classmethod
    def _param_defaults(cls) -> dict:
        """Each constructor parameter's default."""
        signature = inspect.signature(cls.__init__)
        return {name: signature.parameters[name].default for name in cls._param_names()}

    def _store_params(self, arguments: dict) -> None:
        """Keep every constructor argument as an attribute of the same name, unchanged
        (scikit-learn's rule: validation happens in fit). Call as
        ``self._store_params(locals())`` from ``__init__``."""
        for name in self._param_names():
            setattr(self, name, arguments[name])

    def get_params(self, deep: bool = True) -> dict:
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        valid = self._param_names()
        for key, value in params.items():
            if key not in valid:
                raise ValueError(
                    f"invalid parameter {key!r} for {type(self).__name__}; valid parameters are: "
                    f"{', '.join(valid)}"
                )
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        defaults = {
            p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()
        }
        changed = []
        for name, value in self.get_params(deep=False).items():
            default = defaults.get(name, inspect.Parameter.empty)
            try:
                same = value is default or value == default
                same = bool(same)
            except Exception:
                same = False
            if not same:
                changed.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"

    def _input_tags(self) -> dict:
        """What X may hold, as scikit-learn's InputTags fields (overridden where more is
        accepted)."""
        return {"allow_nan": False}

    def __sklearn_tags__(self):
        # Only scikit-learn calls this, so scikit-learn is importable here.
        from sklearn.utils import ClassifierTags, InputTags, RegressorTags, Tags, TargetTags

        kind = self.estimator_type
        return Tags(
            estimator_type=kind,
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags() if kind == "classifier" else None,
            regressor_tags=RegressorTags() if kind == "regressor" else None,
            input_tags=InputTags(**self._input_tags()),
            # every random choice is drawn from random_state, and a tree does not depend on
            # the thread count
            non_deterministic=False,
        )
