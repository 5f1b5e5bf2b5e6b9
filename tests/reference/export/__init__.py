"""Helpers for the dynamo_export tests (tests/reference/test_export_*.py)."""
