"""Tests of the project's GE executor (``torchair_cpu.ge``), one small graph per kernel."""
