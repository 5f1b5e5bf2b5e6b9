"""Tests of the project's GE executor (``ge_executor``, impl/ge_executor): the graph runner, one small graph per
kernel (a module per kernel family), and that every GE op type the reference's lowering emits has a kernel."""
