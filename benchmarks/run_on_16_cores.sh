#!/usr/bin/env bash
# The 16-thread figures of issue 59 on a lent 16-core machine (no network there): the
# core and the histogram plugin installed from this checkout without dependencies (the
# machine's numpy, numba, scipy, attrs, pluggy and scikit-learn are used), LightGBM from a
# wheel carried in .whl/, kernels compiled once by a warm-up, then the forest benchmark
# (100 000 x 20, 100 trees, n_jobs=16, 1M rows predicted) and the histogram benchmark (1M x
# 20, depth 12, one thread and all threads), one fresh process per figure.
#
#     bash benchmarks/run_on_16_cores.sh OUTDIR [forest] [histogram] [threads] [boosting]
#
# (sections: all three by default; LIBRARIES names the histogram section's contestants)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-/tmp/bench16}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
python3 -m pip install -q --no-index --no-deps --no-build-isolation \
  -e . -e plugins/splitters/histogram
nproc
python3 - <<'EOF'
import time
import numpy as np
from treekit_core import ForestClassifier, ForestRegressor, TreeClassifier

start = time.perf_counter()
rng = np.random.default_rng(0)
X = rng.normal(size=(500, 20))
y = (X[:, 0] > 0).astype(int)
ForestClassifier(n_estimators=2, n_jobs=2).fit(X, y).predict(X)
ForestRegressor(n_estimators=2, n_jobs=2).fit(X, X[:, 1]).predict(X)
TreeClassifier(splitter="histogram", max_depth=12).fit(X, y).predict(X)
TreeClassifier(max_depth=12).fit(X, y).predict(X)
print(f"first compile: {time.perf_counter() - start:.1f} s")
EOF
sections="${*:2}"
sections="${sections:-forest histogram threads boosting}"
for section in $sections; do
  case "$section" in
    forest)
      python3 benchmarks/bench_forest_scale.py --n 100000 --jobs 16 --predict 1000000 \
        --repeats 1 --json "$out/forest16.json" 2>&1 | tee "$out/forest16.txt" ;;
    histogram)
      python3 benchmarks/bench_histogram.py --only large --cases 1000000:12 --repeats 1 \
        --libraries ${LIBRARIES:-sklearn treekit_exhaustive treekit_histogram lightgbm} \
        --json "$out/histogram16.json" 2>&1 | tee "$out/histogram16.txt" ;;
    boosting)
      python3 benchmarks/bench_boosting.py --only large --n "${BOOST_N:-200000}" \
        --threads 1 16 --json "$out/boosting16.json" 2>&1 | tee "$out/boosting16.txt" ;;
    threads)
      python3 benchmarks/bench_histogram_threads.py --threads 1 2 4 8 16 --repeats 2 \
        ${TASKS:+--tasks-per-thread $TASKS} 2>&1 \
        | grep -v CompilationNotice | tee "$out/histogram_threads16.txt" ;;
  esac
done
