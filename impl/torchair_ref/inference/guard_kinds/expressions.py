"""Integer and identity expressions over sources (SPEC CC-21 (a), (b)): LAMBDA_GUARD (the shape environment's
`4 <= L['x'].size()[0]`, `L['n'] != 1`, `not math.isnan(L['scale'])`) and OBJECT_ALIASING (tied weights
`A is B`), kept as a template that `guard_expressions.parse_expression` validated: only those forms reach generated
code. The saved-tensor-hooks lambda needs no check: an inference graph saves no tensors."""
from __future__ import annotations

from dataclasses import dataclass

from torchair_ref import _torch
from torchair_ref.inference import guard_expressions
from torchair_ref.inference.guard_kinds import register
from torchair_ref.inference.guard_kinds.base import Code, GuardSpec, RawGuard


@register
@dataclass(frozen=True)
class Expr(GuardSpec):
    """`expr` (with `_s{i}` standing for `sources[i]`) holds."""

    check = "expr"
    kinds = ("LAMBDA_GUARD", "OBJECT_ALIASING")
    replayable = True

    expr: str
    sources: list[str]

    @classmethod
    def translate(cls, raw: RawGuard) -> list[GuardSpec]:
        if raw.kind == "LAMBDA_GUARD" and raw.text == _torch.SAVED_TENSOR_HOOKS_GUARD:
            return []
        specs: list[GuardSpec] = []
        for part in raw.parts:
            template, sources = guard_expressions.parse_expression(part)
            specs.append(cls(raw.kind, raw.when(sources), part, template, sources))
        return specs

    def validate(self, sources: bool = True) -> None:
        super().validate(sources)
        guard_expressions.parse_expression(self.expr)

    def test(self, code: Code) -> str:
        codes = {f"_s{n}": code.read(source) for n, source in enumerate(self.sources)}
        functions = {name: code.bind(guard_expressions.FUNCTIONS[name])
                     for name in guard_expressions.functions_in(self.expr)}
        return guard_expressions.substitute(self.expr, codes, functions)
