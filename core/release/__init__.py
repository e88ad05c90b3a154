"""Releases: a workspace's benchmark as a static, self-contained folder anyone can open and check.

- :mod:`~core.release.scope`: what a release holds (datasets, runs, GT definitions and K);
- :mod:`~core.release.data`: the data it carries, laid out as a workspace (``DIR/data``);
- :mod:`~core.release.figures`: every figure it shows, computed from that data
  (:mod:`~core.release.gt_figures`, :mod:`~core.release.run_figures`, :mod:`~core.release.charts`);
- :mod:`~core.release.datasheet`: the datasheet (``DATASHEET.md`` and its page);
- :mod:`~core.release.page`: ``index.html``, its data and the Vega JavaScript it draws charts with;
- :mod:`~core.release.build` / :mod:`~core.release.verify`: write a release, and check one;
- :mod:`~core.release.claims` / :mod:`~core.release.claim_check`: claims that check themselves;
- :mod:`~core.release.audits`: the interface through which judge audits enter a release;
- :mod:`~core.release.links`: the app's page links (``WORKBENCH_BASE_URL``).
"""
