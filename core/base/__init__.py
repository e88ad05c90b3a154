"""The kernel every other package stands on: errors, files, settings, limits, progress,
registries. It imports nothing else of the workbench."""
