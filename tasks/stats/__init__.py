"""Statistics over rows already in the warehouse: agreement, calibration, A/B comparison, panels,
pairwise figures, rubric weight fitting. No model calls.
"""
