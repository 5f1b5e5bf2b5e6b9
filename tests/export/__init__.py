"""Helpers for the dynamo_export tests (tests/test_export_*.py)."""
