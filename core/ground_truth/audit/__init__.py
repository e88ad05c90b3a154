"""Judge audits (issue 28): humans answer a task's judgment fields for sampled reviews, blind to
every judge, and each judge is measured against their consensus.

Modules: :mod:`~core.ground_truth.audit.stats` (Wilson intervals of weighted proportions, sample sizes,
Cohen's κ), :mod:`~core.ground_truth.audit.plan` (strata, knife-edge reviews first, sizes for a target
interval width), :mod:`~core.ground_truth.audit.project` (the plan of a workspace's judge and its labeling
project, kind ``judgment_audit``), :mod:`~core.ground_truth.audit.report` (confusion, precision and recall
with intervals, κ, the confusion file that ``gt uncertainty`` reads).
"""
