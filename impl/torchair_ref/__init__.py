"""torchair_ref: reference implementation of TorchAir's compile cache on stock PyTorch (surface: SPEC IMPL-1)."""
