"""The built-in pruners: ``none``, ``cost_complexity`` (CART / rpart), ``pessimistic``
(C4.5 / J48) and ``mdl`` (the handout's alpha x size + leaf impurity)."""
