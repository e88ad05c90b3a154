"""The perspective study (SPEC §7): collect responses over a prompt grid, score them, audit them
with human raters, and analyse scores by model and perspective."""
