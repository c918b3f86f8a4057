"""A thin Python client around the ``twoscale`` executable, and a writer of its weights files.

    import twoscale
    twoscale.save_weights(model.state_dict(), "model.safetensors")
    r = twoscale.fisher(arch="8-4-3", bias=True, weights="model.safetensors", data="csv:X.csv", sigma2=0.1)
    r["trace"], r["blocks"][0]["eigenvalues"]

``ed``, ``fisher``, ``bound`` and ``run`` return the parsed ``--json`` output (keys: docs/COMMANDS.md).
The executable: ``binary=``, else $TWOSCALE_BIN, else ``twoscale`` on PATH.
"""

from ._cli import TwoscaleError, bound, build_argv, ed, find_binary, fisher, run
from ._weights import safetensors_bytes, save_weights

__version__ = "0.1.0"

__all__ = ["TwoscaleError", "bound", "build_argv", "ed", "find_binary", "fisher", "run",
           "safetensors_bytes", "save_weights", "__version__"]
