"""The stack-config schema, one module per platform, and the parse entry (`stack.parse_file`).

`stack` reads a stack file through `infra.core.stackfile` and validates it into a `StackConfig`;
`base` holds the strict model and the fields every platform shares; `gke`, `eks`, `kubernetes`
and `operator` hold each block's schema. May import: `infra.core.rules`, `errors`, `stackfile` and
`catalog`; never a planner, Pulumi or a cloud SDK.
"""
