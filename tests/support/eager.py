"""Loaded by pytest before the settings (pyproject.toml's addopts: ``-p tests.support.eager``).

Without Redis the tests run tasks inside the process that sends them, as ./run test asks
too; the settings read CELERY_EAGER once, when they load.
"""

import os

if not os.environ.get("REDIS_URL"):
    os.environ.setdefault("CELERY_EAGER", "1")
