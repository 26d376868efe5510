"""Real public data sets bundled with treekit, with loaders in the style of sklearn.datasets.

The CSV files live in ``treekit_core/datasets/data``; ``data/PROVENANCE.md`` says where
each comes from. Missing values (empty fields or ``?``) load as NaN. Nominal columns load as
ordinal codes (the sorted distinct values, listed in ``categories``) with ``categorical``
marking them.
"""

from __future__ import annotations

import csv
from importlib import resources

import attrs
import numpy as np

#: name -> (rows, features, description and source)
DATASETS = {
    "wisconsin": "699 x 9, benign/malignant, 16 missing values in V6; "
    "UCI breast-cancer-wisconsin (original), as R's MASS::biopsy",
    "wdbc": "569 x 30, M/B; UCI Wisconsin diagnostic breast cancer (KEEL copy)",
    "pima": "768 x 8, tested_positive/negative; UCI Pima Indians diabetes (KEEL copy)",
    "bupa": "345 x 6, classes 1/2; UCI BUPA liver disorders (KEEL copy)",
    "haberman": "306 x 3, positive/negative; UCI Haberman's survival (KEEL copy)",
    "satimage": "6435 x 36, classes 1,2,3,4,5,7 (class 4 ~10%); "
    "UCI Statlog Landsat satellite (KEEL copy)",
    "lenses": "24 x 4 nominal, hard/soft/none; UCI contact lenses (Weka's copy)",
    "balance_scale": "625 x 4, L/B/R; UCI balance scale, generated from its definition",
    "soybean": "683 x 35 nominal with missing values, 19 classes; UCI soybean (large), Weka's copy",
    "vote": "435 x 16 nominal (y/n) with missing values, democrat/republican; "
    "UCI congressional voting records, Weka's copy",
    "labor": "57 x 16 (8 numeric, 8 nominal) with missing values, bad/good; "
    "UCI labor relations, Weka's copy",
    # regression (the response, a number, is the last column; rows without it are dropped)
    "airquality": "116 x 5 with 5 missing Solar.R, response Ozone (ppb); New York air "
    "quality, May to September 1973 (R's datasets::airquality; 37 rows without Ozone dropped)",
    "quakes": "1000 x 4, response mag (Richter magnitude); earthquakes off Fiji since 1964 "
    "(R's datasets::quakes)",
    "cu_summary": "117 x 4 (Country, Type nominal; Reliability 1-5 and Mileage with missing "
    "values), response Price (US$); cars of Consumer Reports 1990 (rpart's cu.summary)",
    "car_test_frame": "60 x 7 (Country, Type nominal; Reliability 1-5 with missing values), "
    "response Mileage (mpg); cars of Consumer Reports 1990 (rpart's car.test.frame)",
    # counts (a response >= 0 counting events, for Poisson trees)
    "solder": "900 x 5 (Opening, Solder, Mask, PadType nominal; Panel 1-3), response skips "
    "(count of solder skips); AT&T's solder experiment (rpart's solder)",
    "warpbreaks": "54 x 2 nominal (wool, tension), response breaks (count of warp breaks per "
    "loom); Tippett 1950 (R's datasets::warpbreaks)",
    # censored follow-up (the last two columns: time, and status 1 = the event, 0 = censored)
    "lung": "228 x 8 with missing values, survival of advanced lung cancer patients (days; "
    "165 deaths); North Central Cancer Treatment Group (R's survival::lung)",
    "veteran": "137 x 6 (celltype nominal), survival in the Veterans' Administration lung "
    "cancer trial (days; 128 deaths); Kalbfleisch and Prentice (R's survival::veteran)",
    "pbc": "418 x 17 (sex nominal) with missing values, survival in the Mayo Clinic primary "
    "biliary cholangitis trial (days; 161 deaths, a transplant censors); R's survival::pbc",
    "mgus2": "1384 x 6, monoclonal gammopathy: months to a plasma cell malignancy (event 1, "
    "115) or death before it (event 2, 860), 409 censored; competing risks "
    "(R's survival::mgus2)",
    "gbsg": "686 x 8, recurrence-free survival of node-positive breast cancer (days; 299 "
    "recurrences or deaths); German Breast Cancer Study Group 2 (R's survival::gbsg)",
    "colon": "929 x 11 (rx nominal) with missing values, survival in a trial of adjuvant "
    "chemotherapy for colon cancer (days; 452 deaths); Moertel et al. (R's survival::colon)",
}
#: Data sets whose last two columns are a follow-up time and an event indicator: their
#: ``y`` is a structured array of (event, time), as scikit-survival's ``Surv`` makes it.
SURVIVAL = ("lung", "veteran", "pbc", "gbsg", "colon")
#: Data sets whose last two columns are a follow-up time and an event code (0 censored,
#: 1..K the cause that ended the follow-up): their ``y`` is a structured array of
#: (event, time), the event an integer.
COMPETING = ("mgus2",)
#: Data sets whose last column is a numeric response (regression, counts), by its name.
RESPONSES = {
    "airquality": "Ozone",
    "quakes": "mag",
    "cu_summary": "Price",
    "car_test_frame": "Mileage",
    "solder": "skips",
    "warpbreaks": "breaks",
}
MISSING = {"", "?", "NA"}


@attrs.frozen
class Dataset:
    name: str
    data: np.ndarray  #: float64 n x d (NaN = missing; nominal columns as codes)
    #: class labels (str, or int when every label is an integer); for the data sets in
    #: :data:`RESPONSES`, the numeric response (float64)
    target: np.ndarray
    feature_names: list
    categorical: np.ndarray  #: bool per feature
    categories: dict  #: feature name -> list of category strings (code = position)
    description: str

    @property
    def X(self):
        return self.data

    @property
    def y(self):
        return self.target


def dataset_path(name: str):
    if name not in DATASETS:
        raise ValueError(
            f"unknown data set {name!r}; bundled data sets: {', '.join(sorted(DATASETS))}"
        )
    return resources.files(__name__).joinpath("data", f"{name}.csv")


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def load_dataset(name: str, *, dropna: bool = False) -> Dataset:
    """Load a bundled data set (``dropna=True`` drops rows with a missing value)."""
    with dataset_path(name).open(encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], [r for r in rows[1:] if r]
    if name in SURVIVAL or name in COMPETING:
        return _survival_dataset(name, header, body, dropna)
    response = RESPONSES.get(name, "class")
    if header[-1] != response:
        raise ValueError(
            f"data set {name!r}: the last column must be {response!r}, got {header[-1]!r}"
        )
    if name in RESPONSES:  # a row without its response is of no use to a regression
        body = [r for r in body if r[-1].strip() not in MISSING]
    columns = list(zip(*body, strict=True))
    X, categorical, categories = _features(columns[:-1], header[:-1])
    labels = [v.strip() for v in columns[-1]]
    if name in RESPONSES:
        y = np.array([float(v) for v in labels])
    elif all(v.lstrip("-").isdigit() for v in labels):
        y = np.array([int(v) for v in labels])
    else:
        y = np.array(labels)
    if dropna:
        keep = ~np.isnan(X).any(axis=1)
        X, y = X[keep], y[keep]
    return Dataset(name, X, y, header[:-1], np.array(categorical), categories, DATASETS[name])


def survival_array(event, time) -> np.ndarray:
    """(event, time) as a structured array with fields ``event`` (bool) and ``time``
    (float64), as scikit-survival's ``Surv.from_arrays`` makes it."""
    y = np.empty(len(time), dtype=[("event", "?"), ("time", "<f8")])
    y["event"], y["time"] = np.asarray(event, dtype=bool), np.asarray(time, dtype=np.float64)
    return y


def _survival_dataset(name, header, body, dropna):
    last = "event" if name in COMPETING else "status"
    if header[-2:] != ["time", last]:
        raise ValueError(f"data set {name!r}: the last columns must be time and {last}")
    columns = list(zip(*body, strict=True))
    X, categorical, categories = _features(columns[:-2], header[:-2])
    time = np.array([float(v) for v in columns[-2]])
    if name in COMPETING:
        y = np.empty(len(time), dtype=[("event", "<i8"), ("time", "<f8")])
        y["event"], y["time"] = [int(v) for v in columns[-1]], time
    else:
        y = survival_array([v.strip() == "1" for v in columns[-1]], time)
    if dropna:
        keep = ~np.isnan(X).any(axis=1)
        X, y = X[keep], y[keep]
    return Dataset(name, X, y, header[:-2], np.array(categorical), categories, DATASETS[name])


def _features(columns, names):
    """The feature columns as float64 (NaN missing; text columns as codes of their sorted
    levels), which are nominal, and their levels."""
    features, categorical, categories = [], [], {}
    for j, column in enumerate(columns):
        present = [v.strip() for v in column if v.strip() not in MISSING]
        if all(_is_number(v) for v in present):
            features.append([float(v) if v.strip() not in MISSING else np.nan for v in column])
            categorical.append(False)
        else:
            levels = sorted(set(present))
            code = {v: float(i) for i, v in enumerate(levels)}
            features.append([code.get(v.strip(), np.nan) for v in column])
            categorical.append(True)
            categories[names[j]] = levels
    return np.array(features, dtype=np.float64).T, categorical, categories


def load_X_y(name: str, *, dropna: bool = False):
    dataset = load_dataset(name, dropna=dropna)
    return dataset.data, dataset.target
