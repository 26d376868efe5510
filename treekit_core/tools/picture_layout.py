"""Where a picture's words sit: the extents matplotlib's renderer gives every text, which
of them overlap or leave the figure, and a tree picture's fonts shrunk until its boxes
and edge labels stand apart. Used by :mod:`treekit_core.tools.plots` and by the tests
that check no two texts of a bundled picture overlap."""

from __future__ import annotations

import numpy as np

#: Smallest font a tree picture shrinks its boxes to (points); below it the picture
#: summarises deeper levels instead (``plot_tree``'s ``max_leaves``).
SMALLEST_FONT = 4.0


#: Most texts :func:`shrink_until_apart` fits (each round draws the figure): a tree drawn
#: with more boxes (``plot_tree(max_leaves=...)`` far above its default) keeps its fonts.
MOST_TEXTS_FITTED = 600


def _renderer(fig):
    fig.canvas.draw()  # lays out ticks, legends and the boxes around texts
    return fig.canvas.get_renderer()


def _tick_labels(fig) -> tuple[set, list]:
    """(the ids of every tick label of ``fig``'s axes, the labels matplotlib draws: those
    of ticks within the axis' view, visible). An axis keeps labels for ticks outside its
    view, which it never draws."""
    every, drawn = set(), []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            slack = 1e-9 * max(1.0, abs(low), abs(high))
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                labels = (tick.label1, tick.label2)
                every.update(id(label) for label in labels)
                shown = ax.get_visible() and ax.axison and axis.get_visible()
                if shown and low - slack <= tick.get_loc() <= high + slack:
                    drawn.extend(label for label in labels if label.get_visible())
    return every, drawn


def shown_texts(fig) -> list:
    """Every text of ``fig`` that is drawn and not blank (titles, labels, the tick labels
    within view, legend entries, annotations), once each."""
    from matplotlib.text import Text

    tick_ids, tick_labels = _tick_labels(fig)
    seen, texts = set(), []
    for text in [*fig.findobj(Text), *tick_labels]:
        if id(text) in seen or not text.get_visible() or not text.get_text().strip():
            continue
        if id(text) in tick_ids and text not in tick_labels:
            continue
        if text.axes is not None and not text.axes.get_visible():
            continue
        seen.add(id(text))
        texts.append(text)
    return texts


def text_extent(text, renderer):
    """A text's extent in display pixels: its box's, where it is drawn in one."""
    patch = text.get_bbox_patch()
    if patch is not None:
        return patch.get_window_extent(renderer)
    return text.get_window_extent(renderer)


def overlapping_texts(fig, texts=None, slack: float = 0.5) -> list:
    """Pairs of texts (of ``texts``, default :func:`shown_texts`) whose extents overlap by
    more than ``slack`` pixels each way, and texts reaching outside the figure (paired with
    None): what a reader cannot read. A sweep along x: each text is compared only with
    those starting before it ends (a tree of thousands of boxes, not all pairs)."""
    renderer = _renderer(fig)
    texts = shown_texts(fig) if texts is None else list(texts)
    if not texts:
        return []
    box = np.array([_bounds(text_extent(t, renderer)) for t in texts])  # x0, x1, y0, y1
    canvas = fig.bbox
    problems = [
        (texts[i], None)
        for i in np.flatnonzero(
            (box[:, 0] < canvas.x0 - slack)
            | (box[:, 2] < canvas.y0 - slack)
            | (box[:, 1] > canvas.x1 + slack)
            | (box[:, 3] > canvas.y1 + slack)
        )
    ]
    order = np.argsort(box[:, 0], kind="stable")
    starts = box[order, 0]
    for rank, i in enumerate(order):
        # the texts starting (by x) before this one ends: the only ones it can overlap
        stop = np.searchsorted(starts, box[i, 1] - slack, side="left")
        others = order[rank + 1 : stop]
        if not others.size:
            continue
        across = np.minimum(box[i, 1], box[others, 1]) - np.maximum(box[i, 0], box[others, 0])
        up = np.minimum(box[i, 3], box[others, 3]) - np.maximum(box[i, 2], box[others, 2])
        for j in others[(across > slack) & (up > slack)]:
            first, second = sorted((int(i), int(j)))
            problems.append((texts[first], texts[second]))
    return problems


def _bounds(extent) -> tuple:
    return (extent.x0, extent.x1, extent.y0, extent.y1)


def shrink_until_apart(fig, texts, step: float = 0.88, smallest: float = SMALLEST_FONT) -> None:
    """Shrink every one of ``texts`` by ``step`` until no two overlap or the smallest font
    is reached: a tree's boxes drawn into less room than they need (a tree beside its
    survival curves) stay readable. Terminates: the font falls by a fixed factor each round
    and stops at ``smallest``; more than :data:`MOST_TEXTS_FITTED` texts are left as
    they are."""
    if len(texts) > MOST_TEXTS_FITTED:
        return  # thousands of boxes: a picture of the tree's shape, drawn as it is
    while overlapping_texts(fig, texts):
        sizes = [t.get_fontsize() for t in texts]
        if max(sizes) <= smallest:
            return
        for text, size in zip(texts, sizes, strict=True):
            text.set_fontsize(max(smallest, size * step))
