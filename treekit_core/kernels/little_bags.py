"""grf's bootstrap of little bags for a binary treatment's effect, row by row (issue 65):
the arithmetic of ``treatment_effects.little_bag_variance`` without its arrays of rows x
trees (ten of them, 8 MB each at 10 000 rows and 100 trees: a first ``predict_interval``
in a process spent more time faulting their pages in than computing)."""

from treekit_core.kernels.compiling import jit


@jit(error_model="numpy")  # IEEE division: a row whose trees' w never varies gets NaN
def little_bag_moments(per_tree, group_size, tau, var_between, group_noise, start, stop):
    """For rows start..stop-1 of ``per_tree`` (rows x trees x (m_w, m_y, m_ww, m_wy)):
    the effect tau (the slope of the trees' mean moments), the variance of the little
    bags' mean pseudo-outcomes and the spread within bags, written in place. The
    pseudo-outcome of tree b: rho_b = (psi1_b - A_w psi2_b) / (A_ww - A_w^2), psi1_b =
    m_wy - tau m_ww - mu m_w, psi2_b = m_y - tau m_w - mu, mu = A_y - tau A_w (A the
    means over the trees)."""
    n_trees = per_tree.shape[1]
    groups = n_trees // group_size
    for i in range(start, stop):
        a_w = a_y = a_ww = a_wy = 0.0
        for b in range(n_trees):
            a_w += per_tree[i, b, 0]
            a_y += per_tree[i, b, 1]
            a_ww += per_tree[i, b, 2]
            a_wy += per_tree[i, b, 3]
        a_w /= n_trees
        a_y /= n_trees
        a_ww /= n_trees
        a_wy /= n_trees
        first_stage = a_ww - a_w * a_w
        effect = (a_wy - a_y * a_w) / first_stage
        mu = a_y - a_w * effect
        between = 0.0
        total = 0.0
        for g in range(groups):
            group_sum = 0.0
            for j in range(group_size):
                b = g * group_size + j
                m_w, m_y = per_tree[i, b, 0], per_tree[i, b, 1]
                psi1 = per_tree[i, b, 3] - per_tree[i, b, 2] * effect - m_w * mu
                psi2 = m_y - m_w * effect - mu
                rho = (psi1 - a_w * psi2) / first_stage
                group_sum += rho
                total += rho * rho
            mean = group_sum / group_size
            between += mean * mean
        tau[i] = effect
        var_between[i] = between / groups
        group_noise[i] = (total / (groups * group_size) - var_between[i]) / (group_size - 1)
