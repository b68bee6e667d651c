"""Meta-evaluation: how well metrics agree with humans.

* :mod:`~dialeval.meta.correlate`: ``correlation_table`` (turn, sample, dialogue, system
  level; Pearson, Spearman, Kendall; cluster-bootstrap CIs; breakdowns by tag and dimension).
* :mod:`~dialeval.meta.significance`: ``compare_metrics`` (paired bootstrap, Williams' test).
* :mod:`~dialeval.meta.ceiling`: ``human_ceiling`` (leave-one-annotator-out).
* :mod:`~dialeval.meta.labels`: ``label_agreement`` (accuracy, UAR, kappas, macro P/R/F1).
* :mod:`~dialeval.meta.agreement`: inter-annotator agreement.
* :mod:`~dialeval.meta.wide`: correlation rows pivoted wide and ranked (the tables of meta, benchmark and report).

Nothing is imported here, so ``import dialeval.meta.agreement`` stays light.
"""
