"""Gold answer evaluation (SPEC §8): score LLM answers against a gold QA set.

Modules: :mod:`~core.gold.items` (loading and validating sets), :mod:`~core.gold.scoring` (the
per-answer rules and a set's config), :mod:`~core.gold.accuracy` (the accuracy methods'
registry), :mod:`~core.gold.answers` (answer sources), :mod:`~core.gold.report` (scoring and the
report layout), :mod:`~core.gold.evaluation` (one evaluation end to end),
:mod:`~core.gold.store` (sets, answers, reports and history in a workspace),
:mod:`~core.gold.compare` (two reports side by side, history frames, highlighting),
:mod:`~core.gold.charts` (Altair charts), :mod:`~core.gold.offline` (the offline retrieval
answerer) and :mod:`~core.gold.demo` (the demo set).
"""
