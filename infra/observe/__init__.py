"""The observe step: every live read a plan decides over, made before planning.

``observe(config)`` runs the observe step of the stack's platform (``infra.observe.gke``,
``infra.observe.eks``) on ``pulumi up`` and returns a frozen ``infra.core.observed.Observed``
that ``build_plan`` decides over and records. Offline plans read nothing (``Observed.none()``).
Reads use the providers' synchronous invokes, so they run with the stack's provider config (the
one read no provider function makes, a GKE cluster's ComputeClasses, goes to the cluster's
Kubernetes API with the provider's own token: ``infra.observe.kubeapi``); this package is the only
place the program reads the live platform (the components map the plan).
"""

from __future__ import annotations

from infra.core.config.stack import StackConfig
from infra.core.observed import Observed
from infra.core.platforms import ENTRIES, load


def observe(config: StackConfig) -> Observed:
    """Read the live platform of ``config``'s stack (``kubernetes`` reads nothing).

    Raises:
        ObserveError: a read failed for another reason than "not found".
    """
    step = ENTRIES[config.platform].observer
    if step is None:
        return Observed.none()
    return Observed(config.platform, load(step)(config))  # each imports only its own provider SDK
