"""Human labeling (SPEC §6): a label store, projects and items, assignment with reservations,
consensus, agreement statistics, exports, rater identity and the demo project.

Modules: :mod:`~core.labeling.store` (tables, engine, transactions and every SQL statement, behind
named functions the other modules call), :mod:`~core.labeling.items`
(projects, item import), :mod:`~core.labeling.sources` (file parsers),
:mod:`~core.labeling.assignment`, :mod:`~core.labeling.consensus`,
:mod:`~core.labeling.agreement`, :mod:`~core.labeling.export`, :mod:`~core.labeling.identity`,
:mod:`~core.labeling.reports`, :mod:`~core.labeling.charts`, :mod:`~core.labeling.demo`.
"""
