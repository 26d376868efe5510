"""The engine: what turns a composition of components into a fitted tree and back into
decisions. Private: plugins use what ``treekit_core`` exports.

``composition``   one component of each kind, its compatibility check, fit and decide
``grow``          the grow loop (stop? -> split search -> propagate)
``stopping``      the stopping rules
``feature_sampling``  which features a node may test (all, or a random subset for forests)
``validation``, ``training_data``  input validation and the training-data container
``categorical``   nominal columns to category codes
``tree``          the fitted tree (flat arrays) and its JSON form
``questions``     routing through a tree's questions (the one contract every consumer uses)
``model_file``    reading a model file: every field checked before anything runs on it
``rejection``     reject rules on any confidence and risk-coverage curves
"""
