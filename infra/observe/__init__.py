"""The observe step: every live read a plan decides over, made before planning.

``observe(config)`` runs the observe step of the stack's platform (``infra.observe.gke``,
``infra.observe.eks``) on ``pulumi up`` and returns a frozen ``infra.core.observed.Observed``
that ``build_plan`` decides over and records. Offline plans read nothing (``Observed.none()``).
Reads use the providers' synchronous invokes, so they run with the stack's provider config; this
package is the only place the program reads the live platform (the components map the plan).
"""

from __future__ import annotations

from infra.core.config.stack import StackConfig
from infra.core.observed import Observed


def observe(config: StackConfig) -> Observed:
    """Read the live platform of ``config``'s stack (``kubernetes`` reads nothing).

    Raises:
        ObserveError: a read failed for another reason than "not found".
    """
    # The one registry of observe steps; each imports only its own provider SDK.
    if config.platform == "eks":
        from infra.observe.eks import observe_eks

        return Observed(eks=observe_eks(config))
    if config.platform == "gke":
        from infra.observe.gke import observe_gke

        return Observed(gke=observe_gke(config))
    return Observed.none()
