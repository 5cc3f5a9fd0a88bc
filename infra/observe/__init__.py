"""The observe step: every live read a plan decides over, made before planning.

``observe(config, catalog)`` runs the observe step of the stack's platform (``infra.observe.gke``,
``infra.observe.eks``) on ``pulumi up`` and returns a frozen ``infra.core.observed.Observed``
that ``build_plan`` decides over and records. Offline plans read nothing (``Observed.none()``).
Reads use the providers' synchronous invokes, so they run with the stack's provider config (the
one read no provider function makes, a GKE cluster's ComputeClasses, goes to the cluster's
Kubernetes API with the provider's own token: ``infra.observe.kubeapi``); this package is the only
place the program reads the live platform (the components map the plan).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from infra.core.config.stack import StackConfig
from infra.core.observed import Observed
from infra.core.platforms import ENTRIES, load

if TYPE_CHECKING:
    from infra.core.catalog.vendored import Catalog


def observe(config: StackConfig, catalog: Catalog) -> Observed:
    """Read the live platform of ``config``'s stack (``kubernetes`` reads nothing) for a plan
    over ``catalog`` (what it reads may hang on the catalog's facts: the add-ons it pins).

    Raises:
        ObserveError: a read failed for another reason than "not found".
    """
    step = ENTRIES[config.platform].observer
    if step is None:
        return Observed.none()
    # each imports only its own provider SDK
    return Observed(config.platform, load(step)(config, catalog))
