"""``python -m quota`` is ``python -m quota.check``."""

import sys

from quota.check import main

sys.exit(main())
