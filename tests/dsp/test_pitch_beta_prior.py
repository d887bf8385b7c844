"""pYIN's beta prior over thresholds: the stored default CDF is scipy's betainc bit for bit, and the weights are
the differences of scipy.stats.beta.cdf (what librosa 0.11 takes) for the defaults and for other parameters."""

import sys

import numpy as np
import pytest

from audiokit.dsp.pitch import PyinModel
from audiokit.dsp.pitch.params import PRIOR, PyinPrior
from audiokit.dsp.pitch.probabilities import DEFAULT_BETA_CDF, DEFAULT_PRIOR


def _weights(prior: PyinPrior) -> np.ndarray:
    return PyinModel.make(sr=16000, fmin=65.4, fmax=2093.0, frame_length=1024, prior=prior).observation.beta_probs


def test_the_stored_default_cdf_is_betainc_bit_for_bit():
    from scipy.special import betainc

    a, b, k = DEFAULT_PRIOR
    assert (float(PRIOR.beta_parameters[0]), float(PRIOR.beta_parameters[1]), PRIOR.n_thresholds) == DEFAULT_PRIOR
    s = np.linspace(0, 1, k + 1)[1:-1]
    stored = np.array([float.fromhex(v) for v in DEFAULT_BETA_CDF])
    np.testing.assert_array_equal(stored, betainc(a, b, s))


@pytest.mark.parametrize(
    "prior",
    [PRIOR, PyinPrior(beta_parameters=(1, 18)), PyinPrior(n_thresholds=50), PyinPrior(beta_parameters=(3.5, 11.0))],
    ids=["defaults", "a=1", "K=50", "a=3.5,b=11"],
)
def test_the_weights_are_the_differences_of_scipys_beta_cdf(prior):
    from scipy import stats

    s = np.linspace(0, 1, prior.n_thresholds + 1)
    np.testing.assert_array_equal(_weights(prior), np.diff(stats.beta.cdf(s, *prior.beta_parameters)))


def test_the_default_weights_import_no_scipy_special():
    import subprocess

    code = (
        "import sys; from audiokit.dsp.pitch import PyinModel; "
        "PyinModel.make(sr=16000, fmin=65.4, fmax=2093.0, frame_length=1024).observation.beta_probs; "
        "print('scipy.special' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
