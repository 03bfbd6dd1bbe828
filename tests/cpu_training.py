"""Command-line flags that train a tiny model quickly on the CPU (tests and benches).

One optimizer step per batch, no checkpoints written during training, no gradient
checkpointing (it only slows a tiny model down) and no tqdm bars in the output.
"""

QUICK_CPU_RUN = [
    "--gradient_accumulation_steps",
    "1",
    "--save_strategy",
    "no",
    "--gradient_checkpointing",
    "false",
    "--disable_tqdm",
    "true",
]
