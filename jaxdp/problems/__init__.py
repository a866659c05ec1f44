"""Problems: per-agent data, losses, metrics and reference solutions (docs/design.md, "Problems
and data").

A ``Problem`` stacks each agent's data with a leading agent axis (N, m, ...) and a mask for
unequal shards; its methods give local losses and gradients (full or minibatch), the global
objective, run metrics, and host-side constants (smoothness, gradient bounds) that accountants
and step-size rules need. Example::

    problem = make_problem("nonconvex_logistic", seed=0)   # paper 000 §6.1
    grads = problem.local_grads(X)                         # X: (N, d) -> (N, d)
    metrics = problem.metrics(X)                           # dict of () arrays
    M = problem.smoothness()                               # host: (N,) numpy

Neural networks (docs/models.md): ``from_model(apply, init_params, features, labels,
parts=split(labels, N, "dirichlet:0.3", seed=0))`` builds a ``ModelProblem`` for any JAX model,
``digits_mlp`` and ``digits_cnn`` ones on the packaged UCI digits; ``load_mnist``, ``load_cifar10`` and
``load_arrays`` read files a user has.
"""

from jaxdp.problems._adult import adult_synthetic, load_adult, normalize_adult
from jaxdp.problems._losses import (
    LOSSES,
    L1LeastSquares,
    L1Logistic,
    LeastSquares,
    Logistic,
    Loss,
    NonconvexLogistic,
    masked_mean,
)
from jaxdp.problems._datasets import (
    load_arrays,
    load_cifar10,
    load_digits,
    load_mnist,
    read_idx,
    train_test_split,
)
from jaxdp.problems._digits import (
    MODEL_PROBLEMS, cnn_apply, cnn_init, digits_cnn, digits_mlp, mlp_apply, mlp_init,
)
from jaxdp.problems._clipping import (
    STRUCTURED_CLIPPING,
    clipped_grad_mean,
    per_example_grads,
    per_example_sq_norms,
    weighted_row_grad,
)
from jaxdp.problems._model import (
    SAMPLE_LOSSES,
    ModelLoss,
    ModelProblem,
    ParamLayout,
    from_model,
)
from jaxdp.problems._partition import (
    SPLITS,
    dirichlet_split,
    histogram_report,
    iid_split,
    label_histogram,
    label_quantity_split,
    shard_split,
    size_skew_split,
    split,
)
from jaxdp.problems._problem import Problem
from jaxdp.problems._reference import solve_reference
from jaxdp.problems._synthetic import (
    PROBLEMS,
    from_arrays,
    least_squares,
    logistic,
    make_problem,
    nonconvex_logistic,
    partition,
    problem_builders,
)

for _name, _builder in MODEL_PROBLEMS.items():  # one registry of every problem builder
    PROBLEMS.register(_name, _builder)

__all__ = [
    "L1LeastSquares",
    "L1Logistic",
    "LOSSES",
    "PROBLEMS",
    "adult_synthetic",
    "load_adult",
    "normalize_adult",
    "LeastSquares",
    "Logistic",
    "Loss",
    "NonconvexLogistic",
    "Problem",
    "from_arrays",
    "least_squares",
    "logistic",
    "make_problem",
    "masked_mean",
    "ModelLoss",
    "ModelProblem",
    "ParamLayout",
    "SAMPLE_LOSSES",
    "STRUCTURED_CLIPPING",
    "clipped_grad_mean",
    "from_model",
    "per_example_grads",
    "per_example_sq_norms",
    "weighted_row_grad",
    "SPLITS",
    "MODEL_PROBLEMS",
    "cnn_apply",
    "cnn_init",
    "digits_cnn",
    "digits_mlp",
    "dirichlet_split",
    "histogram_report",
    "iid_split",
    "label_histogram",
    "label_quantity_split",
    "load_arrays",
    "load_cifar10",
    "load_digits",
    "load_mnist",
    "mlp_apply",
    "mlp_init",
    "read_idx",
    "shard_split",
    "size_skew_split",
    "split",
    "train_test_split",
    "nonconvex_logistic",
    "partition",
    "problem_builders",
    "solve_reference",
]
