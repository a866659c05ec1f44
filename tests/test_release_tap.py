"""tests/release_tap.py substitutes compiled programs for the samplers' draws; the draws must be
the ones the op-by-op run would make (the gate reads every release against them)."""
import jax
import numpy as np
import pytest

from jaxdp.privacy import _mechanisms
from tests import release_tap
from tests.release_tap import Tap, tapping


@pytest.mark.parametrize("law", ["gaussian", "laplace"])
def test_tapped_lattice_draws_are_the_op_by_op_draws(law):
    """Bit for bit (float32: the integer ``K`` scaled by ``1/R`` and cast; float64 only changes
    the cast)."""
    key, shape, dtype = jax.random.key(3), (3, 5), "float32"
    with jax.enable_x64(True):
        with jax.disable_jit():
            eager = np.asarray(_mechanisms.noise_draws(key, shape, dtype, law=law))
        with tapping(Tap()), jax.disable_jit():
            tapped = _mechanisms.noise_draws(key, shape, dtype, law=law)
            assert _mechanisms.lattice_draws is not release_tap._LATTICE_DRAWS  # compiled
    assert tapped.dtype == eager.dtype and tapped.shape == shape
    np.testing.assert_array_equal(np.asarray(tapped), eager)
