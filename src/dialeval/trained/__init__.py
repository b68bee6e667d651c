"""Trained evaluators: models learned from human ratings (DiQAD's baselines and a metric-feature ensemble).

``dialeval train`` fits and evaluates them; a saved one is the metric ``trained:<folder>``.
Heavy libraries (scikit-learn, xgboost, torch) are imported inside the functions that use them.
"""
