"""What scoring reads from a dataset: the texts of the reviews a method saw, the restaurants' categories
(the queries are :mod:`core.datasets.browse`'s; a run's own files are :mod:`core.runs.records`'s)."""

from core.datasets.browse import categories_by_restaurant as dataset_categories
from core.datasets.browse import texts_of_restaurants as dataset_review_texts

__all__ = ["dataset_categories", "dataset_review_texts"]
