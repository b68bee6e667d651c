"""Label agreement against scikit-learn on real USR labels, and a hand-computed example."""

from __future__ import annotations

import pytest
from sklearn import metrics as skm

from dialeval.errors import InputError
from dialeval.meta.labels import label_agreement


def annotator_pair(usr, dim):
    """First vs second annotator's labels on every USR-TC item (real 1-3 / 0-1 labels)."""
    first = [r[dim][0] for ctx in usr.contexts for r in ctx["responses"]]
    second = [r[dim][1] for ctx in usr.contexts for r in ctx["responses"]]
    return first, second


@pytest.mark.parametrize("dim", ["Natural", "Uses Knowledge", "Overall"])
def test_parity_with_sklearn_on_usr(usr, dim):
    y_true, y_pred = annotator_pair(usr, dim)
    got = label_agreement(y_true, y_pred)
    labels = sorted(set(y_true) | set(y_pred))
    p, r, f, _ = skm.precision_recall_fscore_support(y_true, y_pred, labels=labels, average="macro", zero_division=0)
    expected = {
        "accuracy": skm.accuracy_score(y_true, y_pred),
        "uar": skm.balanced_accuracy_score(y_true, y_pred),
        "kappa": skm.cohen_kappa_score(y_true, y_pred),
        "kappa_linear": skm.cohen_kappa_score(y_true, y_pred, weights="linear"),
        "kappa_quadratic": skm.cohen_kappa_score(y_true, y_pred, weights="quadratic"),
        "precision_macro": p,
        "recall_macro": r,
        "f1_macro": f,
        "n": 360,
    }
    assert got == pytest.approx(expected, abs=1e-12)


def test_hand_computed_example():
    # true 0,1,2,2 / pred 0,1,1,2: accuracy 3/4; recalls 1, 1, 1/2 -> UAR 5/6;
    # confusion diag 3 of 4, expected agreement (1*1 + 1*2 + 2*1)/16 = 5/16 -> kappa = (3/4 - 5/16)/(11/16) = 7/11.
    r = label_agreement([0, 1, 2, 2], [0, 1, 1, 2])
    assert r["accuracy"] == 0.75
    assert r["uar"] == pytest.approx(5 / 6)
    assert r["kappa"] == pytest.approx(7 / 11)
    # precisions 1, 1/2, 1 -> 5/6; F1s 1, 2/3, 2/3 -> 7/9.
    assert r["precision_macro"] == pytest.approx(5 / 6) and r["f1_macro"] == pytest.approx(7 / 9)


def test_a_predicted_class_absent_from_the_truth_counts_against_its_true_class_silently(recwarn):
    # true 0,0,1 / pred 0,2,1: recalls of the true classes 1/2 and 1 -> UAR 3/4 (class 2 is never true, so it has
    # no recall of its own); scikit-learn warns "y_pred contains classes not in y_true" here, dialeval does not.
    r = label_agreement([0, 0, 1], [0, 2, 1])
    assert r["uar"] == pytest.approx(3 / 4)
    assert r["accuracy"] == pytest.approx(2 / 3)
    assert not [w for w in recwarn if "classes not in y_true" in str(w.message)]


def test_macro_figures_leave_out_a_label_neither_side_gives():
    """A test fold without class 0, predicted perfectly: macro P/R/F1 counted class 0 as 0 and gave 2/3, not 1."""
    r = label_agreement([1, 2, 1, 2], [1, 2, 1, 2], labels=[0, 1, 2])
    assert (r["precision_macro"], r["recall_macro"], r["f1_macro"], r["uar"]) == (1.0, 1.0, 1.0, 1.0)
    # one miss into class 0, which no true label has: scikit-learn's default label set (both sides' labels)
    y_true, y_pred = [1, 2, 1, 2], [1, 2, 0, 2]
    p, rec, f, _ = skm.precision_recall_fscore_support(y_true, y_pred, average="macro", zero_division=0)
    got = label_agreement(y_true, y_pred, labels=[0, 1, 2])
    assert (got["precision_macro"], got["recall_macro"], got["f1_macro"]) == pytest.approx((p, rec, f), abs=1e-12)
    # the kappas keep the whole label set: a weighted kappa's distances are its positions in the scale
    assert got["kappa_linear"] == pytest.approx(skm.cohen_kappa_score(y_true, y_pred, labels=[0, 1, 2],
                                                                      weights="linear"), abs=1e-12)  # fmt: skip


def test_label_errors():
    with pytest.raises(InputError, match="2 true labels but 1 predictions"):
        label_agreement([0, 1], [0])
    with pytest.raises(InputError, match="not in the label set"):
        label_agreement([0, 1], [0, 3], labels=[0, 1, 2])


def test_kappa_of_one_label_on_both_sides_is_none_without_a_warning(recwarn):
    # p_o = p_e = 1 -> kappa = 0/0: scikit-learn returns nan and warns "A single label was found"
    r = label_agreement([1, 1, 1], [1, 1, 1], labels=[0, 1, 2])
    assert r["kappa"] is None and r["kappa_linear"] is None and r["kappa_quadratic"] is None
    assert r["accuracy"] == 1.0
    assert not [w for w in recwarn if "single label" in str(w.message)]
    assert label_agreement([1, 1, 1], [2, 2, 2], labels=[0, 1, 2])["kappa"] == 0.0  # p_o = p_e = 0: defined
