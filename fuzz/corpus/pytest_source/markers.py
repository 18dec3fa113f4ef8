import pytest
from utils import skip_less_device, skip_single_gpu

pytestmark = pytest.mark.gpu2


@skip_less_device(4)
def test_x():
    pass


@pytest.mark.skip_less_mpi_world_size(2)
class TestX:
    pytestmark: list = [skip_single_gpu]

    @pytest.mark.parametrize("quant,tp,n", [
        pytest.param("fp8", "tp2", 4, marks=skip_less_device(4)),
        pytest.param("bf16", tp_value(), 8, id="bf16-tp8", marks=pytest.mark.gpu8),
    ])
    def test_p(self, quant, tp, n):
        pass

    def test_y(self):
        pass


@pytest.mark.parametrize("quant,tp,n", [pytest.param("fp8", "tp2", 4, marks=[skip_less_device(2)])])
def test_p(quant, tp, n):
    pass
