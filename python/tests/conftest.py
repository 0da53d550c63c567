import pytest

import strata


@pytest.fixture
def g():
    graph = strata.Graph()
    yield graph
    graph.close()
