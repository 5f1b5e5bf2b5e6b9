"""IMPL-4: Python stand-ins for upstream TorchAir's four native modules (linked against CANN/GE); each raises
``NeedsCANNError`` ("... needs CANN/GE") where real work would start, and none invents a result."""
