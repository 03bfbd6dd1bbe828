"""Evaluation: datasets, metrics, runners and reports."""
