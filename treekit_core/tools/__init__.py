"""User-facing tools around the estimators: the ``treekit`` command line (``cli``), CSV
reading (``csvdata``), diagnostic metrics (``metrics``), pictures (``plots``, matplotlib),
text and dot export (``export``), the HTML report (``report``: ``model_report(model, X, y,
path=...)``) and the progress line (``progress``)."""
