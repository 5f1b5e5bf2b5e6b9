"""dynamo_export (SPEC section 4)."""
