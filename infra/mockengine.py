"""Run the real Pulumi program in-process on Pulumi's mock engine, recording what it registers.

The program plans over an ``Observed`` it is given (``Observed.none()`` by default: nothing
running), or, with ``account``, runs its own observe step against a fake ``LiveAccount``
(``infra.mocklive``), per run: the engine holds no state between runs. Provider look-ups (invokes)
and the observe step's Kubernetes reads (``mocklive.kube_read``) are answered from the vendored
catalog and that account through ``INVOKES``; an invoke with no
entry fails loudly instead of returning ``{}``. Resources get the outputs a real provider would
compute (``OUTPUTS``), so later inputs that depend on them are concrete and traceable; both tables
are in ``infra.mockanswers``. Used by ``python -m infra.plan`` and by the stack-test harness.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pulumi
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc
from pulumi.runtime.proto import resource_pb2
from pulumi.runtime.settings import ROOT, SETTINGS
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

from infra.core.catalog.vendored import Catalog
from infra.core.config.stack import PROJECT, encode_engine_config, parse
from infra.core.observed import Observed
from infra.mockanswers import CHILDREN, INVOKES, OUTPUTS, UnmockedInvokeError
from infra.mocklive import InvokeFailure, LiveAccount, kube_read
from infra.observe import kubeapi

SECRET = "[secret]"


@dataclass(frozen=True, slots=True)
class Registered:
    """One resource as the engine saw it register."""

    urn: str
    id: str | None
    type: str
    name: str
    parent: str | None
    custom: bool
    remote: bool
    inputs: dict[str, Any]
    depends_on: tuple[str, ...]
    # Input key -> the URNs its value came from (the engine's PropertyDependencies): the edges a
    # replacement propagates along, unlike an explicit dependsOn (``infra.core.diff``).
    property_dependencies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    ignore_changes: tuple[str, ...] = ()  # the ignoreChanges option: paths the engine never diffs
    import_id: str = ""  # the import option: the ID of an existing resource the engine adopts
    # The resource options the engine received (``options_of``): protect, deleteBeforeReplace, ...
    options: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The contract's resource shape for ``python -m infra.plan --json``."""
        return {
            "urn": self.urn,
            "id": self.id,
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "custom": self.custom,
            "inputs": self.inputs,
            "dependsOn": list(self.depends_on),
            "propertyDependencies": {k: list(v) for k, v in self.property_dependencies.items()},
            "options": self.options,
        }


@dataclass
class Recording:
    """Everything one program run registered, in registration order, and its stack outputs."""

    resources: list[Registered] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    invokes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    outputs_registered: set[str] = field(default_factory=set)
    # (level, message) the program logged (pulumi.log): kept here, not printed by the mock engine.
    logs: list[tuple[str, str]] = field(default_factory=list)

    def components_without_outputs(self) -> list[str]:
        """URNs of local components that never called ``register_outputs``."""
        return [
            r.urn
            for r in self.resources
            if not r.custom and not r.remote and r.urn not in self.outputs_registered
        ]

    def of_type(self, token: str) -> list[Registered]:
        """Resources of one type token, in registration order."""
        return [r for r in self.resources if r.type == token]

    def one(self, token: str, name: str | None = None) -> Registered:
        """The single resource of ``token`` (named ``name``, if given)."""
        found = [r for r in self.of_type(token) if name is None or r.name == name]
        if len(found) != 1:
            raise AssertionError(
                f"expected one {token} {name or ''}, found {len(found)}: {[r.name for r in found]}"
            )
        return found[0]

    def by_urn(self, urn: str) -> Registered:
        """The resource with this URN."""
        return next(r for r in self.resources if r.urn == urn)


class CatalogMocks(pulumi.runtime.Mocks):
    """Answers invokes from ``INVOKES`` and computes outputs from ``OUTPUTS``."""

    def __init__(self, catalog: Catalog, recording: Recording, account: LiveAccount) -> None:
        self.catalog = catalog
        self.recording = recording
        self.account = account
        # Children of remote components made so far (``CHILDREN``): URN -> (id, state).
        self.children: dict[str, tuple[str, dict[str, Any]]] = {}

    def new_resource(self, args: pulumi_mocks.MockResourceArgs) -> tuple[str | None, dict]:
        extra = OUTPUTS.get(args.typ)
        state = {**args.inputs, **(extra(args) if extra else {})}
        children = CHILDREN.get(args.typ)
        for output, (typ, name, child_state) in (children(args) if children else {}).items():
            # Named as MockMonitor.make_urn names a child: its parent's own type, then its own.
            urn = "urn:pulumi:" + "::".join(
                [pulumi.get_stack(), pulumi.get_project(), f"{args.typ}${typ}", name]
            )
            self.children[urn] = (f"{name}_id", child_state)
            # A resource reference (pulumi.runtime.rpc): the resource signature, URN and ID.
            state[output] = {
                rpc._special_sig_key: rpc._special_resource_sig,  # pyright: ignore[reportPrivateUsage]
                "urn": urn,
                "id": f"{name}_id",
            }
        return (f"{args.name}_id" if args.custom else None), state

    def call(self, args: pulumi_mocks.MockCallArgs) -> dict:  # type: ignore[override]
        fn = INVOKES.get(args.token)
        if fn is None:
            raise UnmockedInvokeError(
                f"unmocked invoke {args.token}; add it to "
                "infra.mockanswers.INVOKES with its data source"
            )
        plain = _plain(args.args)
        self.recording.invokes.append((args.token, plain))
        try:
            if (reason := self.account.failures.get(args.token)) is not None:
                raise InvokeFailure(reason)
            return fn(plain, self.catalog, self.account)
        except InvokeFailure as e:
            raise e.rpc_error(args.token) from None  # as the engine fails a bridged read


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """The mock monitor, plus a record of each registration's parent and dependencies.

    Registers resources itself rather than through ``MockMonitor.RegisterResource``: that one
    serialises each resource's state back with the SDK's async serializer on a per-thread event
    loop (~5 % of a 100-pool plan's CPU time), although the state is plain JSON almost always. A
    state that is not (a resource reference, an asset) is still serialised by the SDK, and a
    registration with transforms goes through ``MockMonitor.RegisterResource`` itself.
    """

    def __init__(self, mocks: CatalogMocks, recording: Recording) -> None:
        super().__init__(mocks)
        self.catalog_mocks = mocks
        self.recording = recording

    def RegisterResource(self, request: Any) -> Any:  # engine RPC name
        if request.type == "pulumi:pulumi:Stack" or request.transforms:
            # The SDK's own path: the Stack, and transforms (which it resolves for new_resource).
            return self._record(request, super().RegisterResource(request))
        urn = self.make_urn(request.parent, request.type, request.name)
        # Resource references in the inputs deserialize into resources, which needs a loop.
        _ensure_event_loop()
        inputs = rpc.deserialize_properties(request.object)
        args = pulumi_mocks.MockResourceArgs(
            typ=request.type,
            name=request.name,
            inputs=inputs,
            provider=request.provider,
            resource_id=request.importId,
            custom=bool(request.custom),
        )
        id_, state = self.catalog_mocks.new_resource(args)
        # As the SDK keeps it (None for a component); getResource and ReadResource read it.
        self.resources[urn] = pulumi_mocks.MockMonitor.ResourceRegistration(
            urn,
            id_,  # pyright: ignore[reportArgumentType]  # the SDK's NamedTuple says str
            state,
        )
        return self._record(
            request,
            resource_pb2.RegisterResourceResponse(
                urn=urn, id=id_ or "", object=state_struct(state)
            ),
            inputs,
        )

    def _record(self, request: Any, response: Any, inputs: Any = None) -> Any:
        """Append the registration to the recording (not the Stack); returns ``response``.

        Children a remote component's outputs refer to are kept for getResource, which
        rehydrates them (``CHILDREN``); the recording, as a plan, shows the component alone.
        """
        while self.catalog_mocks.children:
            child, (id_, state) = self.catalog_mocks.children.popitem()
            self.resources[child] = pulumi_mocks.MockMonitor.ResourceRegistration(child, id_, state)
        if request.type == "pulumi:pulumi:Stack":
            return response
        if inputs is None:
            inputs = rpc.deserialize_properties(request.object)
        deps = set(request.dependencies)
        by_key: dict[str, tuple[str, ...]] = {}
        for key, pdeps in request.propertyDependencies.items():
            deps.update(pdeps.urns)
            if pdeps.urns:
                by_key[str(key)] = tuple(sorted(set(pdeps.urns)))
        self.recording.resources.append(
            Registered(
                urn=response.urn,
                id=response.id or None,
                type=request.type,
                name=request.name,
                parent=request.parent or None,
                custom=bool(request.custom),
                remote=bool(request.remote),
                inputs=_plain(inputs),
                depends_on=tuple(sorted(deps)),
                property_dependencies=dict(sorted(by_key.items())),
                ignore_changes=tuple(request.ignoreChanges),
                import_id=request.importId or "",
                options=options_of(request),
            )
        )
        return response

    def RegisterResourceOutputs(self, request: Any) -> Any:  # engine RPC name
        self.recording.outputs_registered.add(request.urn)
        return super().RegisterResourceOutputs(request)


def options_of(request: Any) -> dict[str, Any]:
    """The lifecycle options of a RegisterResource request, as the engine reads them.

    ``deleteBeforeReplace`` is ``None`` unless set (``deleteBeforeReplaceDefined``): then the
    provider decides the replace order (pulumi/pulumi pkg/resource/deploy/step_generator.go).
    """
    timeouts = request.customTimeouts
    custom = {
        k: getattr(timeouts, k) for k in ("create", "update", "delete") if getattr(timeouts, k)
    }
    aliases = [str(a.urn) if a.urn else MessageToDict(a.spec) for a in request.aliases]
    return {
        "protect": bool(request.protect),
        "deleteBeforeReplace": bool(request.deleteBeforeReplace)
        if request.deleteBeforeReplaceDefined
        else None,
        "retainOnDelete": bool(request.retainOnDelete),
        "deletedWith": request.deletedWith or None,
        "customTimeouts": custom or None,
        "ignoreChanges": list(request.ignoreChanges),
        "aliases": [*aliases, *request.aliasURNs],
    }


def run(
    config: Mapping[str, Any],
    stack: str,
    catalog: Catalog | None = None,
    plan_catalog: Catalog | None = None,
    *,
    observed: Observed | None = None,
    account: LiveAccount | None = None,
) -> Recording:
    """Run ``infra.program.run()`` for a stack's raw config on the mock engine.

    ``catalog`` answers provider look-ups; ``plan_catalog`` is the catalog the program plans over
    (default: the vendored one; ``--old-catalog`` passes an earlier one). The program plans over
    ``observed`` (default ``Observed.none()``: an offline plan reads nothing), or with ``account``
    runs its observe step, as ``pulumi up`` does, against that fake account.

    Raises:
        pulumi.RunError: the program rejected the config.
        UnmockedInvokeError: the program called a provider function with no mock answer.
    """
    recording = Recording()

    def body() -> None:
        from infra import program

        given = None if account is not None else observed or Observed.none()
        outputs = program.run(plan_catalog, given)
        recording.outputs = _sync_await(_resolve(outputs))

    return run_body(config, stack, catalog, body, account, recording)


def observe(
    config: Mapping[str, Any], stack: str, account: LiveAccount, catalog: Catalog | None = None
) -> Observed:
    """The observe step of a stack's raw config (``infra.observe.observe``) against ``account``:
    what ``pulumi up`` would read from it. ``--diff`` plans its new side over this, with the
    account the old side's deploy leaves (``mocklive.after``).

    Raises:
        ObserveError: a read failed (the account's ``oidc_lookup_error``, say).
    """
    from infra.observe import observe as observe_step

    found: list[Observed] = []
    planned_over = catalog or Catalog.load()
    run_body(
        config,
        stack,
        catalog,
        lambda: found.append(
            observe_step(parse(config, stack, planned_over.data_dir), planned_over)
        ),
        account,
    )
    return found[0]


def run_body(
    config: Mapping[str, Any],
    stack: str,
    catalog: Catalog | None,
    body: Callable[[], None],
    account: LiveAccount | None = None,
    recording: Recording | None = None,
) -> Recording:
    """``body()`` as the program of a mock-engine run of its own; returns what it recorded."""
    # Every event loop of the run is ours and closed before returning. Pulumi's mock monitor runs on
    # the loop's executor threads and gives each thread a loop of its own (_ensure_event_loop) that
    # nobody closes; their finalizers at interpreter exit, after the loops' self-pipe sockets were
    # collected, print "Exception ignored in: BaseEventLoop.__del__ ... Invalid file descriptor".
    loop = asyncio.new_event_loop()
    thread_loops: list[asyncio.AbstractEventLoop] = []

    def give_thread_a_loop() -> None:
        thread_loops.append(asyncio.new_event_loop())
        asyncio.set_event_loop(thread_loops[-1])

    loop.set_default_executor(ThreadPoolExecutor(initializer=give_thread_a_loop))
    asyncio.set_event_loop(loop)
    try:
        return _run(config, stack, catalog, recording or Recording(), body, account)
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())  # joins the threads
        finally:
            asyncio.set_event_loop(None)
            for each in (loop, *thread_loops):
                close_loop(each)


def close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Close a loop of the run as ``asyncio.run`` closes its own: cancel what never finished.

    A task can be left unstarted at the end (an apply scheduled in the loop's last turn, the rest
    of a run that failed, an output of a resource a thread rehydrated from a reference); dropped
    later, when the next run clears the SDK's tracked outputs, it would print "coroutine ... was
    never awaited" in the middle of that run.
    """
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.close()


def _run(
    config: Mapping[str, Any],
    stack: str,
    catalog: Catalog | None,
    recording: Recording,
    body: Callable[[], None],
    account: LiveAccount | None,
) -> Recording:
    live = account or LiveAccount()
    mocks = CatalogMocks(catalog or Catalog.load(), recording, live)
    # set_mocks makes a root Stack only when none is set (pulumi/runtime/mocks.py): without this,
    # every later run in the process (a fleet, the tests) parents its components to the first
    # run's stack URN.
    ROOT.set(None)
    pulumi.runtime.set_mocks(
        mocks,
        project=PROJECT,
        stack=stack,
        preview=False,
        logger=_recording_logger(recording),
        monitor=RecordingMonitor(mocks, recording),
    )
    pulumi.runtime.set_all_config(encode_engine_config(config))
    _skip_source_positions()
    # The same reset pulumi.runtime.test does; SETTINGS is a context proxy pyright cannot see through.
    SETTINGS.rpc_manager.clear()  # pyright: ignore[reportAttributeAccessIssue]
    SETTINGS.outputs.clear()  # pyright: ignore[reportAttributeAccessIssue]
    # The observe step's Kubernetes reads go to the fake account, as its invokes do.
    reset = kubeapi.READ.set(kube_read(live))
    try:
        _sync_await(run_pulumi_func(body))
    finally:
        kubeapi.READ.reset(reset)
    return recording


def _skip_source_positions() -> None:
    """Register resources without a captured stack trace: only a real engine shows positions.

    The SDK walks the Python stack for every resource (``pulumi.runtime.resource._get_stack_trace``)
    so the engine can point at the line that created it; under mocks nothing reads it, and the walk
    is ~15 % of registering a resource. An SDK without the hook is left alone.
    """
    from pulumi.runtime import resource as runtime_resource

    if hasattr(runtime_resource, "_get_stack_trace"):
        from pulumi.runtime.proto import source_pb2

        setattr(runtime_resource, "_get_stack_trace", source_pb2.StackTrace)  # noqa: B010


class _RecordLogs(logging.Handler):
    def __init__(self, recording: Recording) -> None:
        super().__init__(logging.INFO)
        self.recording = recording

    def emit(self, record: logging.LogRecord) -> None:
        self.recording.logs.append((record.levelname.lower(), record.getMessage()))


def _recording_logger(recording: Recording) -> logging.Logger:
    """The mock engine's logger: records into ``recording.logs`` (pulumi's default is the root
    logger, whose last-resort handler would print each program warning to stderr)."""
    logger = logging.getLogger(f"{__name__}.engine")
    logger.handlers[:] = [_RecordLogs(recording)]
    logger.setLevel(logging.INFO)  # debug chatter of the SDK is not kept
    logger.propagate = False
    return logger


async def _resolve(value: Any) -> Any:
    """Await every Output inside ``value``; secrets become ``"[secret]"``.

    One after another, not gathered: the mock engine has no latency to overlap, and a task per
    dict and list was ~4 % of a 100-pool plan's CPU time.
    """
    if isinstance(value, pulumi.Output):
        if await value.is_secret():
            return SECRET
        return await _resolve(await value.future())
    if isinstance(value, dict):
        return {k: await _resolve(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [await _resolve(v) for v in value]
    return value


def state_struct(state: Mapping[str, Any]) -> struct_pb2.Struct:
    """``state`` as the engine's wire struct, as ``rpc.serialize_properties`` would give it.

    Plain JSON values are copied straight in (a top-level ``None`` is left out, as the SDK does);
    anything else (a resource reference, an asset) goes through the SDK's serializer.
    """
    if not _is_json(state):
        return _sync_await(rpc.serialize_properties(dict(state), {}))
    struct = struct_pb2.Struct()
    for key, value in state.items():
        if value is not None:
            struct[key] = value
    return struct


def _is_json(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_is_json(v) for v in value)
    return value is None or isinstance(value, str | int | float | bool)


def _plain(value: Any) -> Any:
    """JSON-safe copy of deserialized wire values: secrets masked, resources as URNs."""
    if rpc.is_rpc_secret(value):
        return SECRET
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, pulumi.Resource):
        return f"[resource {type(value).__name__}]"
    if isinstance(value, float) and value.is_integer():
        return int(value)  # the wire carries every number as a double; the program gave an int
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
