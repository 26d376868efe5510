"""Follow-up that ends in one of several kinds of event (competing risks), and delayed
entry: the estimators and two-sample tests clinicians use on them.

* :func:`cumulative_incidence`: the Aalen-Johansen cumulative incidence of one cause,
  F_k(t) = sum_{s <= t} S(s-) d_k(s) / n(s), with Gray's variance (cmprsk 2.2's
  ``cuminc``, its Fortran ``cinc`` step for step).
* :func:`gray_scores`: Gray's (1988) K-sample test of a cause's cumulative incidence
  (cmprsk's ``crstm``, one stratum): scores s and their covariance, the statistic
  s' V^-1 s on K - 1 degrees of freedom.
* :func:`logrank_scores`: the K-sample log-rank test of a cause-specific hazard, observed
  less expected events per group and the hypergeometric covariance (``survival::survdiff``
  with rho = 0), risk sets counting a row from its entry on (entry < t <= time, the
  counting-process convention of ``Surv(entry, time, event)``).

Unweighted (cmprsk's and survdiff's estimates count rows). Times are processed in
increasing order, each distinct time once.
"""

from __future__ import annotations

import numpy as np


def cumulative_incidence(time: np.ndarray, event: np.ndarray, cause: int):
    """(times, incidence, variance): at every distinct time at which ``cause`` occurs, the
    Aalen-Johansen incidence of that cause just after it and Gray's variance estimate
    (cmprsk's ``cinc``; ``event`` 0 censored, other codes other causes)."""
    order = np.argsort(time, kind="stable")
    y, code = time[order], event[order]
    n = y.size
    times, incidence, variance = [], [], []
    survival, f, v1, v2, v3 = 1.0, 0.0, 0.0, 0.0, 0.0
    _, first = np.unique(y, return_index=True)
    ends = np.append(first[1:], n)
    for start, end in zip(first, ends, strict=True):
        at_risk = n - start
        nd1 = int((code[start:end] == cause).sum())
        nd2 = int(((code[start:end] != cause) & (code[start:end] != 0)).sum())
        nd = nd1 + nd2
        if nd == 0:
            continue
        after = survival * (at_risk - nd) / at_risk
        if nd1 > 0:
            f = f + survival * nd1 / at_risk
        if nd2 > 0 and after > 0:
            t5 = 1.0 - (nd2 - 1.0) / (at_risk - 1.0) if nd2 > 1 else 1.0
            t6 = survival * survival * t5 * nd2 / (at_risk * at_risk)
            t3, t4 = 1.0 / after, f / after
            v1, v2, v3 = v1 + t4 * t4 * t6, v2 + t3 * t4 * t6, v3 + t3 * t3 * t6
        if nd1 > 0:
            t5 = 1.0 - (nd1 - 1.0) / (at_risk - 1.0) if nd1 > 1 else 1.0
            t6 = survival * survival * t5 * nd1 / (at_risk * at_risk)
            t3 = 1.0 / after if after > 0 else 0.0
            t4 = 1.0 + t3 * f
            v1, v2, v3 = v1 + t4 * t4 * t6, v2 + t3 * t4 * t6, v3 + t3 * t3 * t6
            times.append(y[start])
            incidence.append(f)
            variance.append(v1 + f * f * v3 - 2.0 * f * v2)
        survival = after
    return np.array(times), np.array(incidence), np.array(variance)


def gray_scores(time, event, group, cause: int, rho: float = 0.0):
    """(scores of the first K - 1 groups, their covariance) of Gray's test that ``cause``
    has the same cumulative incidence in every group (cmprsk's ``crst``); ``group`` holds
    codes 0..K-1."""
    order = np.argsort(time, kind="stable")
    y, code, g = time[order], event[order], np.asarray(group)[order]
    m = np.where(code == cause, 1, np.where(code == 0, 0, 2))
    ng = int(g.max()) + 1
    ng1 = ng - 1
    rs = np.bincount(g, minlength=ng).astype(np.float64)
    s = np.zeros(ng1)
    v = np.zeros((ng1, ng1))
    f1m, f1 = np.zeros(ng), np.zeros(ng)
    skmm, skm = np.ones(ng), np.ones(ng)
    v3, v2 = np.zeros(ng), np.zeros((ng1, ng))
    c = np.zeros((ng, ng))
    fm = f = 0.0
    n = y.size
    _, first = np.unique(y, return_index=True)
    ends = np.append(first[1:], n)
    for ll, lu in zip(first, ends, strict=True):
        d = np.zeros((3, ng))
        np.add.at(d, (m[ll:lu], g[ll:lu]), 1.0)
        nd1, nd2 = d[1].sum(), d[2].sum()
        if nd1 > 0 or nd2 > 0:
            present = rs > 0
            tr = tq = 0.0
            for i in np.flatnonzero(present):
                skm[i] = skmm[i] * (rs[i] - d[1, i] - d[2, i]) / rs[i]
                f1[i] = f1m[i] + skmm[i] * d[1, i] / rs[i]
                tr += rs[i] / skmm[i]
                tq += rs[i] * (1.0 - f1m[i]) / skmm[i]
            f = fm + nd1 / tr
            fb = (1.0 - fm) ** rho
            a = np.zeros((ng, ng))
            for i in np.flatnonzero(present):
                t1 = rs[i] / skmm[i]
                a[i, i] = fb * t1 * (1.0 - t1 / tr)
                c[i, i] += a[i, i] * nd1 / (tr * (1.0 - fm))
                for j in range(i + 1, ng):
                    if rs[j] <= 0:
                        continue
                    a[i, j] = -fb * t1 * rs[j] / (skmm[j] * tr)
                    c[i, j] += a[i, j] * nd1 / (tr * (1.0 - fm))
            for i in range(1, ng):
                for j in range(i):
                    a[i, j] = a[j, i]
                    c[i, j] = c[j, i]
            for i in range(ng1):
                if rs[i] > 0:
                    s[i] += fb * (d[1, i] - nd1 * rs[i] * (1.0 - f1m[i]) / (skmm[i] * tq))
            if nd1 > 0:
                for k in np.flatnonzero(present):
                    t4 = 1.0 - (1.0 - f) / skm[k] if skm[k] > 0 else 1.0
                    t5 = 1.0 - (nd1 - 1.0) / (tr * skmm[k] - 1.0) if nd1 > 1 else 1.0
                    t3 = t5 * skmm[k] * nd1 / (tr * rs[k])
                    v3[k] += t4 * t4 * t3
                    for i in range(ng1):
                        t1 = a[i, k] - t4 * c[i, k]
                        v2[i, k] += t1 * t4 * t3
                        for j in range(i + 1):
                            v[i, j] += t1 * (a[j, k] - t4 * c[j, k]) * t3
            if nd2 > 0:
                for k in range(ng):
                    if skm[k] <= 0 or d[2, k] <= 0:
                        continue
                    t4 = (1.0 - f) / skm[k]
                    t5 = 1.0 - (d[2, k] - 1.0) / (rs[k] - 1.0) if d[2, k] > 1 else 1.0
                    t3 = t5 * (skmm[k] ** 2 * d[2, k]) / (rs[k] ** 2)
                    v3[k] += t4 * t4 * t3
                    for i in range(ng1):
                        t1 = t4 * c[i, k]
                        v2[i, k] -= t1 * t4 * t3
                        for j in range(i + 1):
                            v[i, j] += t1 * (t4 * c[j, k]) * t3
        if lu >= n:
            break
        rs -= np.bincount(g[ll:lu], minlength=ng)
        fm = f
        f1m[:] = f1
        skmm[:] = skm
    for i in range(ng1):
        for j in range(i + 1):
            for k in range(ng):
                v[i, j] += c[i, k] * c[j, k] * v3[k] + c[i, k] * v2[j, k] + c[j, k] * v2[i, k]
    lower = np.tril(v)
    return s, lower + np.tril(lower, -1).T


def logrank_scores(time, event, group, entry=None):
    """(observed less expected events per group, their covariance, expected events per
    group) of the K-sample log-rank test (``event`` True where the row's follow-up ends in
    the event tested; ``group`` codes 0..K-1), each row at risk while entry < t <= time
    (entry 0 when None). At each event time t with n at risk and d events, n_g and d_g in
    group g: O - E sums d_g - d n_g / n, the covariance d (n - d) / (n - 1) (n_g / n)
    (delta_gh - n_h / n)."""
    time = np.asarray(time, dtype=np.float64)
    event = np.asarray(event, dtype=bool)
    group = np.asarray(group, dtype=np.int64)
    k = int(group.max()) + 1
    entry = np.zeros_like(time) if entry is None else np.asarray(entry, dtype=np.float64)
    event_times = np.unique(time[event])
    observed = np.zeros((event_times.size, k))
    np.add.at(observed, (np.searchsorted(event_times, time[event]), group[event]), 1.0)
    at_risk = np.zeros((event_times.size, k))
    for g in range(k):  # entered before t, not left before t
        entered = np.searchsorted(np.sort(entry[group == g]), event_times, side="left")
        left = np.searchsorted(np.sort(time[group == g]), event_times, side="left")
        at_risk[:, g] = entered - left
    total = at_risk.sum(axis=1)
    deaths = observed.sum(axis=1)
    share = at_risk / total[:, None]
    expected = deaths[:, None] * share
    factor = np.where(total > 1, deaths * (total - deaths) / np.maximum(total - 1.0, 1.0), 0.0)
    covariance = np.diag((factor[:, None] * share).sum(axis=0)) - np.einsum(
        "t,tg,th->gh", factor, share, share
    )
    return (observed - expected).sum(axis=0), covariance, expected.sum(axis=0)
