import os

import pytest


@pytest.fixture(autouse=True, scope="module")
def the_apis_environment_stays_in_this_module():
    """The API points this process at the shared Prefect server through its environment
    (PREFECT_API_URL and its secret), as a notebook's process should be; the `rubricflow` processes
    later tests start must not inherit it."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)
