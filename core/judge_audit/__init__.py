"""Judge audits (issue 28): humans answer a task's judgment fields for sampled reviews, blind to
every judge, and each judge is measured against their consensus.

Modules: :mod:`~core.judge_audit.stats` (Wilson intervals of weighted proportions, sample sizes,
Cohen's κ), :mod:`~core.judge_audit.plan` (strata, knife-edge reviews first, sizes for a target
interval width), :mod:`~core.judge_audit.project` (the plan of a workspace's judge and its labeling
project, kind ``judgment_audit``), :mod:`~core.judge_audit.report` (confusion, precision and recall
with intervals, κ, the confusion file that ``gt uncertainty`` reads).
"""
