# Test fixture for trtllm-run: unit-test style GPU markers.
import pytest
from utils.util import skip_single_gpu


@pytest.mark.gpu2
def test_allreduce_2gpu():
    pass


@pytest.mark.gpu4
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_allreduce_4gpu(dtype):
    pass


@skip_single_gpu
def test_needs_two():
    pass


def test_single():
    pass


@pytest.mark.parametrize("mpi_pool_executor", [
    pytest.param(2, marks=skip_single_gpu),
], indirect=True)
def test_with_pool(mpi_pool_executor):
    pass
