"""Human labeling (SPEC §6): a label store, projects and items, assignment with reservations,
corrections, extra raters where raters disagree, consensus, adjudication claims, agreement
statistics and per-rater scales, exports, rater identity and personal links, and the demo project.

Modules: :mod:`~core.labeling.store` (a package: tables, engine, transactions and every SQL
statement, behind named functions the other modules call), :mod:`~core.labeling.items`
(projects and their settings, item import), :mod:`~core.labeling.sources` (file parsers),
:mod:`~core.labeling.assignment` (next item, submissions, corrections),
:mod:`~core.labeling.routing` (extra raters), :mod:`~core.labeling.consensus`,
:mod:`~core.labeling.answers` and :mod:`~core.labeling.answer_consensus` (a judgment audit's
categorical answers and their majority consensus),
:mod:`~core.labeling.claims` (the adjudication queue), :mod:`~core.labeling.agreement`,
:mod:`~core.labeling.rater_stats` (leniency, range use), :mod:`~core.labeling.export`,
:mod:`~core.labeling.identity`, :mod:`~core.labeling.links` (team-mode sign-in links),
:mod:`~core.labeling.reports`, :mod:`~core.labeling.charts`, :mod:`~core.labeling.render`,
:mod:`~core.labeling.demo`.
"""
