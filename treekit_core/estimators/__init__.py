"""The scikit-learn-style estimators: ``TreeClassifier``, ``ForestClassifier`` and
``PairwiseDAG``; import them from ``treekit_core``."""
