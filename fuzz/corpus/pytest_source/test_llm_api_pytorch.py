# Test fixture for trtllm-run: GPU-count markers in the styles of the real accuracy tests.
import pytest

from ..conftest import llm_models_root, skip_pre_hopper


class TestLlama3_1_8BInstruct:
    MODEL_NAME = "meta-llama/Llama-3.1-8B-Instruct"

    def test_bfloat16(self):
        pass

    @pytest.mark.skip_less_device(2)
    @pytest.mark.skip_less_device_memory(80000)
    def test_fp8_tp2(self):
        pass

    @pytest.mark.parametrize(
        "tp_size,pp_size",
        [
            pytest.param(1, 1, id="tp1"),
            pytest.param(2, 2, id="tp2pp2", marks=pytest.mark.skip_less_device(4)),
            pytest.param(4, 2, marks=[pytest.mark.skip_less_device(8),
                                      pytest.mark.timeout(7200)]),
        ],
    )
    def test_nvfp4(self, tp_size, pp_size):
        pass


@pytest.mark.timeout(14400)
@pytest.mark.skip_less_device(4)
@pytest.mark.skip_less_device_memory(140000)
class TestDeepSeekV3Lite:
    """Four GPUs for the class (the marker is on the class)."""

    def test_bfloat16(self):
        # skip_less_device(2) in a comment is not a marker
        pass

    @pytest.mark.skip_less_device(8)
    @pytest.mark.parametrize("mtp", ["disable", "eagle"])
    def test_fp8_block_scales_4gpus(self, mtp):
        pass

    @skip_pre_hopper
    def test_nvfp4_single(self):
        """A docstring with skip_less_device(16) ( unbalanced"""
        pass

    class TestNested:

        @pytest.mark.skip_less_mpi_world_size(2)
        def test_inner(self):
            pass


class TestQwen3_235B:
    pytestmark = [pytest.mark.skip_less_device(8), pytest.mark.skip_less_device_memory(80000)]

    def test_fp8(self):
        pass

    @pytest.mark.skip_less_device(16)
    def test_too_big(self):
        pass


@pytest.mark.skip_less_mpi_world_size(4)
def test_multi_world(llm_root):
    pass


@pytest.mark.parametrize("backend", [
    "TRTLLM",
    pytest.param("CUTLASS", marks=pytest.mark.skip_less_device(2)),
])
@pytest.mark.parametrize("model", ["llama-7b", pytest.param("mixtral-8x7b",
                                                            marks=pytest.mark.skip_less_device(4))])
def test_llm_parametrized(backend, model):
    pass


async def test_async_two_gpus():
    pass


@pytest.mark.skip_less_device(4)
class TestOuterFour:
    """Four GPUs for the class; its inner class asks for two, which wins for its tests."""

    @pytest.mark.skip_less_device(2)
    class TestInnerTwo:

        def test_inner_default(self):
            pass


class TestOuterPlain:

    class TestInnerOnly:
        pytestmark = [pytest.mark.skip_less_device(2)]

        def test_inner_only(self):
            pass
