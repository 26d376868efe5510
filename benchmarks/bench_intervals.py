"""Prediction intervals at 90% (issue 63): treekit's forest (split conformal, CQR, raw
quantiles, the jackknife+-after-bootstrap from its out-of-bag rows) beside quantile-forest
(its quantiles, conformalised as CQR on the same conformal rows) and MAPIE (split
conformal around scikit-learn's forest; CQR around gradient-boosted quantiles, MAPIE's
usual pairing; the jackknife+-after-bootstrap of 100 bagged trees), on the same rows, in
one run. Then the honest forest's held-out error beside the adaptive one.

    python benchmarks/bench_intervals.py [--repeats 5] [--json FILE]

Per data set and method: mean coverage of the held-out rows, mean and median width, and
the seconds to fit, calibrate and predict (one thread). Data: synthetic heteroscedastic
(normal noise, and t with 2 degrees of freedom), 3000 training rows of which 1000
calibrate, 20 000 held out; the bundled quakes (magnitude, 1000 rows: 500 train, 200
calibrate, 300 held out). Every forest has 100 trees, min_samples_leaf=5.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
from common import machine_line  # noqa: E402

ALPHA = 0.1


def synthetic(noise, rng, n):
    X = rng.uniform(-2, 2, size=(n, 5))
    scale = 0.5 + np.abs(X[:, 1])
    draw = rng.normal(size=n) if noise == "normal" else rng.standard_t(2, size=n)
    return X, np.sin(2 * X[:, 0]) + X[:, 2] + scale * draw


def splits(name, seed):
    rng = np.random.default_rng(seed)
    if name == "quakes":
        from treekit_core.datasets import load_X_y

        X, y = load_X_y("quakes")
        order = rng.permutation(len(y))
        X, y = np.asarray(X, dtype=float)[order], np.asarray(y, dtype=float)[order]
        return X[:500], y[:500], X[500:700], y[500:700], X[700:], y[700:]
    X, y = synthetic(name, rng, 3000 + 20_000)
    return X[:2000], y[:2000], X[2000:3000], y[2000:3000], X[3000:], y[3000:]


def cqr(lower_c, upper_c, y_c, lower, upper):
    from treekit_core.estimators.conformal import conformal_quantile

    q = conformal_quantile(np.maximum(lower_c - y_c, y_c - upper_c), ALPHA)
    return np.column_stack([lower - q, upper + q])


def methods(seed):
    """name -> function(X, y, X_c, y_c, X_test) giving (n_test, 2) intervals."""
    from treekit_core import ForestRegressor

    def treekit(method, **params):
        def run(X, y, X_c, y_c, X_test):
            model = ForestRegressor(100, min_samples_leaf=5, random_state=seed, **params)
            if method == "jackknife+":
                model.set_params(oob_score=True)
                return model.fit(np.vstack([X, X_c]), np.r_[y, y_c]).predict_interval(X_test, ALPHA)
            model.fit(X, y, conformal_rows=(X_c, y_c))
            return model.predict_interval(X_test, ALPHA, method)

        return run

    def quantile_forest(X, y, X_c, y_c, X_test):
        from quantile_forest import RandomForestQuantileRegressor

        model = RandomForestQuantileRegressor(
            n_estimators=100, min_samples_leaf=5, random_state=seed
        ).fit(X, y)
        bounds = [ALPHA / 2, 1 - ALPHA / 2]
        calibration, test = (
            model.predict(X_c, quantiles=bounds),
            model.predict(X_test, quantiles=bounds),
        )
        return cqr(calibration[:, 0], calibration[:, 1], y_c, test[:, 0], test[:, 1])

    def mapie_split(X, y, X_c, y_c, X_test):
        from mapie.regression import SplitConformalRegressor
        from sklearn.ensemble import RandomForestRegressor

        forest = RandomForestRegressor(100, min_samples_leaf=5, random_state=seed).fit(X, y)
        mapie = SplitConformalRegressor(forest, confidence_level=1 - ALPHA, prefit=True)
        mapie.conformalize(X_c, y_c)
        return mapie.predict_interval(X_test)[1][:, :, 0]

    def mapie_cqr(X, y, X_c, y_c, X_test):
        from mapie.regression import ConformalizedQuantileRegressor
        from sklearn.ensemble import GradientBoostingRegressor

        mapie = ConformalizedQuantileRegressor(
            GradientBoostingRegressor(loss="quantile", random_state=seed),
            confidence_level=1 - ALPHA,
        )
        mapie.fit(X, y).conformalize(X_c, y_c)
        return mapie.predict_interval(X_test)[1][:, :, 0]

    def mapie_jackknife(X, y, X_c, y_c, X_test):
        from mapie.regression import JackknifeAfterBootstrapRegressor
        from sklearn.tree import DecisionTreeRegressor

        mapie = JackknifeAfterBootstrapRegressor(
            DecisionTreeRegressor(min_samples_leaf=5),
            confidence_level=1 - ALPHA,
            resampling=100,
            random_state=seed,
        )
        mapie.fit_conformalize(np.vstack([X, X_c]), np.r_[y, y_c])
        return mapie.predict_interval(X_test)[1][:, :, 0]

    return {
        "treekit conformal": treekit("conformal"),
        "treekit cqr": treekit("cqr"),
        "treekit quantile (raw)": treekit("quantile"),
        "treekit jackknife+ (oob)": treekit("jackknife+"),
        "treekit honest cqr": treekit("cqr", honest=True),
        "quantile-forest + cqr": quantile_forest,
        "MAPIE split (sklearn forest)": mapie_split,
        "MAPIE cqr (gradient boosting)": mapie_cqr,
        "MAPIE jackknife+ab (100 trees)": mapie_jackknife,
    }


def honesty_errors(seed):
    """Held-out mean squared error of the adaptive and the honest forest (all the
    training and calibration rows train)."""
    from treekit_core import ForestRegressor

    out = {}
    for name in ("normal", "t2", "quakes"):
        X, y, X_c, y_c, X_test, y_test = splits(name, seed)
        X, y = np.vstack([X, X_c]), np.r_[y, y_c]
        for honest in (False, True):
            model = ForestRegressor(100, min_samples_leaf=5, honest=honest, random_state=seed)
            error = float(np.mean((model.fit(X, y).predict(X_test) - y_test) ** 2))
            out.setdefault(name, {})["honest" if honest else "adaptive"] = error
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    print(machine_line(ROOT, "sklearn", "quantile_forest", "mapie"), flush=True)
    rows = []
    for data in ("normal", "t2", "quakes"):
        found = {}
        for repeat in range(args.repeats):
            X, y, X_c, y_c, X_test, y_test = splits(data, repeat)
            for name, run in methods(repeat).items():
                start = time.perf_counter()
                interval = run(X, y, X_c, y_c, X_test)
                seconds = time.perf_counter() - start
                inside = (interval[:, 0] <= y_test) & (y_test <= interval[:, 1])
                width = interval[:, 1] - interval[:, 0]
                found.setdefault(name, []).append(
                    (inside.mean(), width.mean(), np.median(width), seconds)
                )
        for name, values in found.items():
            coverage, mean_width, median_width, seconds = np.mean(values, axis=0)
            rows.append(
                {
                    "data": data,
                    "method": name,
                    "coverage": coverage,
                    "mean_width": mean_width,
                    "median_width": median_width,
                    "seconds": seconds,
                }
            )
            print(
                f"{data:7s} {name:32s} coverage {coverage:.3f} | width mean {mean_width:7.3f}"
                f" median {median_width:7.3f} | {seconds:6.2f} s",
                flush=True,
            )
    errors = [honesty_errors(repeat) for repeat in range(args.repeats)]
    for name in errors[0]:
        adaptive = np.mean([e[name]["adaptive"] for e in errors])
        honest = np.mean([e[name]["honest"] for e in errors])
        print(
            f"{name:7s} held-out MSE: adaptive {adaptive:.4f}, honest {honest:.4f} "
            f"(x{honest / adaptive:.3f})",
            flush=True,
        )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"intervals": rows, "honesty": errors}, handle, indent=1)


if __name__ == "__main__":
    main()
