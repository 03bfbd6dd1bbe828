"""DPO the switcher on a real small model (Gemma 3 270M, LoRA, CPU) and measure it honestly.

    nice .venv/bin/python bench/dpo_gemma_switcher.py [--train-steps 24] [--eval-steps 40]

Needs the `train` and `real-model` extras. The model is `prefrag.small_model`'s checkpoint
(converted from the packaged GGUF once), linked under `--work` with a Gemma chat template.

Compare steps come from HotpotQA-style items as a run meets them (the item's paragraphs in
a seeded order, two new documents a step, earlier ones held); the prompt is the one the
`compare` role sends (`compare_prompt`, documents cut to `--doc-chars`). The teacher is the
gold rule (keep exactly when a supporting paragraph is new: `GoldTeacher`). Training pairs
come from tuning items 1-200: chosen is the teacher's verdict (`"status": true|false`, the
runtime schema's JSON), rejected is one of the policy's own samples (temperature 0.9) that
does not give the teacher's verdict (a wrong status, or a reply the parser cannot read);
a step where every sample agrees makes no pair. Held-out steps come from report items
201-350, so no question is on both sides.

Agreement is measured through the runtime path: `LLMReasoner(structured=False).compare`
with the model behind `HFChatModel` (greedy), whose unreadable reply falls back to "keep"
exactly as at run time. Printed: agreement with the teacher on the held-out steps before
and after DPO, with a 95% Wilson interval, the share of replies that parsed, and the
baselines on the same steps: the label prior (the training steps' majority label) and the
heuristic switcher (`ExtractiveReasoner(use_embeddings=False)`); plus the steps whose
verdict changed either way (a paired count).

Each phase keeps its result in `--work` (the pairs, the verdicts before, the trained
adapter, the verdicts after) under a key of the arguments, so a run stopped by a time limit
continues where it stopped: on a shared two-core machine, run it as several bounded holds
of the CPU lock with the same arguments. Held-out steps are a prefix of items 201-350's
steps, so a larger `--eval-steps` later extends the verdicts already measured.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

from _common import HOTPOT
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from prefrag.datasets import load_dataset
from prefrag.documents import make_document
from prefrag.local_models import HFChatModel, _chat_dicts
from prefrag.reasoners.extractive import ExtractiveReasoner
from prefrag.reasoners.llm import LLMReasoner, compare_prompt
from prefrag.reasoners.parsing import is_placeholder, is_unreadable_reply, parse_compare
from prefrag.training.pairs import make_pair
from prefrag.training.switcher_teachers import GoldTeacher

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the quick CPU training flags
GEMMA_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}"
    "<start_of_turn>{{ role }}\n{{ message['content'] | trim }}<end_of_turn>\n"
    "{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)
PER_STEP = 2
MAX_HELD = 2


def gemma_folder(work: Path) -> Path:
    """Gemma 3 270M with a chat template, over `small_model_checkpoint()`'s weights.

    The fp32 weights converted once from the packaged GGUF (`prefrag.small_model`) are
    linked, not copied or converted again; the tokenizer gets Gemma's turn template and
    generation stops at `<end_of_turn>`.
    """
    folder = work / "gemma3-270m"
    if (folder / "tokenizer.json").is_file():
        return folder
    from transformers import AutoTokenizer, GenerationConfig

    from prefrag.small_model import small_model_checkpoint

    base = small_model_checkpoint()
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", "model.safetensors"):
        link = folder / name
        if not link.exists():
            link.symlink_to(base / name)
    tokenizer = AutoTokenizer.from_pretrained(str(base))
    generation = GenerationConfig.from_pretrained(str(base))
    generation.eos_token_id = [
        tokenizer.eos_token_id,
        tokenizer.convert_tokens_to_ids("<end_of_turn>"),
    ]
    generation.save_pretrained(folder)
    tokenizer.chat_template = GEMMA_TEMPLATE
    tokenizer.save_pretrained(folder)
    return folder


def steps(item, seed: int = 0):
    """(question, held, new) per step of one item, at most `MAX_HELD` documents held."""
    docs = [
        make_document(p.text, id=f"{item.id}-{i}", source="local", title=p.title)
        for i, p in enumerate(item.paragraphs)
    ]
    random.Random(f"{seed}:{item.id}").shuffle(docs)
    return [
        (item.question, docs[:start], docs[start : start + PER_STEP])
        for start in range(0, MAX_HELD + 1, PER_STEP)
    ]


def wilson(successes: int, n: int) -> list[float]:
    if n == 0:
        return [0.0, 0.0]
    p, z = successes / n, 1.96
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(centre - half, 3), round(centre + half, 3)]


def judged(statuses: list[bool], truth: list[bool], parsed: list[bool] | None = None) -> dict:
    right = sum(s == t for s, t in zip(statuses, truth, strict=True))
    result = {"agreement": round(right / len(truth), 3), "95% interval": wilson(right, len(truth))}
    if parsed is not None:
        result["replies parsed"] = round(sum(parsed) / len(parsed), 3)
    return result


def runtime_status(reply: str, prompt: str, shown: list[str]) -> bool | None:
    """The status the runtime `compare` reads from `reply`, None when it reads none."""
    if is_unreadable_reply(reply, prompt):
        return None
    verdict = parse_compare(reply, quoted=shown)
    if verdict is None or is_placeholder(verdict.analysis):
        return None
    return verdict.status


def generate_batch(
    chat: HFChatModel, conversations: list[list[dict[str, str]]], *, count: int = 1
) -> list[list[str]]:
    """`count` replies per conversation from `chat`'s checkpoint, in one `generate` call.

    The same chat template, sampling settings (`chat.temperature` above zero samples with
    `top_p`, else greedy) and reply length as `HFChatModel.invoke`; the prompts are
    left-padded into one batch and each prompt's samples share its forward pass
    (`num_return_sequences`). On two CPU cores this is what makes the run affordable:
    decoding reads the weights once per token for the whole batch. Greedy replies match
    one-at-a-time decoding up to floating-point ties.
    """
    import torch

    model, tokenizer = chat._load()
    tokenizer.padding_side = "left"
    encoded = tokenizer.apply_chat_template(
        conversations,
        add_generation_prompt=True,
        padding=True,
        return_dict=True,
        return_tensors="pt",
    )
    length = int(encoded["input_ids"].shape[-1])
    options: dict = {"do_sample": chat.temperature > 0, "max_new_tokens": chat.max_new_tokens}
    if chat.temperature > 0:
        options.update(temperature=chat.temperature, top_p=chat.top_p)
    with torch.no_grad():
        output = model.generate(
            **encoded, num_return_sequences=count, pad_token_id=tokenizer.pad_token_id, **options
        )
    texts = [tokenizer.decode(row[length:], skip_special_tokens=True) for row in output]
    return [texts[i * count : (i + 1) * count] for i in range(len(conversations))]


class ReplayModel(BaseChatModel):
    """A chat model answering from replies generated beforehand, keyed by the messages.

    It lets the runtime `LLMReasoner.compare` (its parser, its repair retry, its fallback)
    judge replies that were generated in batches. A conversation without a reply is
    recorded in `missing` and answered with an empty text; the caller generates those and
    runs again, keeping only the run in which nothing was missing.
    """

    replies: dict = Field(default_factory=dict)
    missing: list = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "replay"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        chat = _chat_dicts(messages)
        key = json.dumps(chat)
        if key not in self.replies:
            self.missing.append(chat)
        message = AIMessage(content=self.replies.get(key, ""))
        return ChatResult(generations=[ChatGeneration(message=message)])


def policy_verdicts(model: HFChatModel, cases, doc_chars: int, saved: Path, batch: int):
    """(status, fell back) per case, resumed from and appended to `saved` (JSONL).

    Each verdict comes from the runtime path, `LLMReasoner(structured=False).compare`: its
    prompt, its parser, its one repair retry on an unreadable reply and its "keep"
    fallback. Only the model calls are batched: the compare runs once to learn which
    conversations it asks (the prompts, then the repair conversations of unreadable
    replies), those are generated `batch` at a time (greedy), and the compare runs again
    on the generated replies.
    """
    out = [json.loads(line) for line in saved.read_text().splitlines()] if saved.exists() else []
    out = out[: len(cases)]  # held-out steps are a prefix: a smaller --eval-steps reuses them
    for first in range(len(out), len(cases), batch):
        chunk = cases[first : first + batch]
        replay = ReplayModel()
        reasoner = LLMReasoner({"default": replay}, structured=False, max_doc_chars=doc_chars)
        while True:
            replay.missing = []
            verdicts = [reasoner.compare(*case) for case in chunk]
            if not replay.missing:
                break
            asked = list({json.dumps(chat): chat for chat in replay.missing}.values())
            for at in range(0, len(asked), batch):
                group = asked[at : at + batch]
                for chat, (reply,) in zip(group, generate_batch(model, group), strict=True):
                    replay.replies[json.dumps(chat)] = reply
        with saved.open("a") as handle:
            for case, verdict in zip(chunk, verdicts, strict=True):
                prompt = compare_prompt(*case, max_doc_chars=doc_chars)
                reply = replay.replies[json.dumps([{"role": "user", "content": prompt}])]
                out.append({"status": verdict.status, "fallback": verdict.fallback, "reply": reply})
                handle.write(json.dumps(out[-1]) + "\n")
        print(f"{saved.stem}: {len(out)}/{len(cases)}", flush=True)
    return [(v["status"], v["fallback"]) for v in out]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", type=Path, default=HOTPOT)
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache/prefrag/dpo-gemma")
    parser.add_argument("--train-steps", type=int, default=24)
    parser.add_argument("--eval-steps", type=int, default=40)
    parser.add_argument("--samples", type=int, default=2, help="Policy samples per step.")
    parser.add_argument("--doc-chars", type=int, default=120)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument(
        "--batch", type=int, default=4, help="Prompts per generate call (speed only)."
    )
    parser.add_argument("--epochs", type=float, default=2)
    parser.add_argument("--learning-rate", type=float, default=2e-4)
    parser.add_argument(
        "--loss-type",
        nargs="+",
        default=["sigmoid"],
        help="TRL loss types; `sigmoid sft` adds the chosen side's NLL (RPO) to DPO.",
    )
    args = parser.parse_args()
    from cpu_training import QUICK_CPU_RUN

    from prefrag.training.dpo import main as dpo

    clock = time.perf_counter()
    args.work.mkdir(parents=True, exist_ok=True)
    base = gemma_folder(args.work)
    # The pairs and the "before" verdicts depend on the sampling arguments only; each
    # training variant (epochs, learning rate, losses) gets its own adapter and "after".
    key = "-".join(str(v) for v in (args.train_steps, args.samples, args.doc_chars))
    run_dir = args.work / f"run-{key}-{args.max_new_tokens}"
    run_dir.mkdir(exist_ok=True)
    variant = "-".join(str(v) for v in (args.epochs, args.learning_rate, *args.loss_type))
    timings = {"model ready": round(time.perf_counter() - clock)}
    print("model ready", flush=True)
    items = load_dataset(args.dataset).items
    teacher = GoldTeacher()
    train_cases = [(item, s) for item in items[:200] for s in steps(item)][: args.train_steps]
    eval_cases = [(item, s) for item in items[200:350] for s in steps(item)][: args.eval_steps]
    eval_truth = [teacher.verdict(item, *case).status for item, case in eval_cases]

    # Pairs: the teacher's verdict against the policy's own mismatching sample.
    sampler = HFChatModel(
        checkpoint=str(base), temperature=0.9, top_p=0.95, max_new_tokens=args.max_new_tokens
    )
    sampled = run_dir / "sampled.jsonl"  # one line per training step done
    done = (
        [json.loads(line) for line in sampled.read_text().splitlines()] if sampled.exists() else []
    )
    pairs, made, why = [], 0, {"every sample agreed": 0}
    for row in done:
        if row["pair"] is None:
            why["every sample agreed"] += 1
        else:
            made += 1
            pairs.append(row["pair"])
    for first in range(len(done), len(train_cases), args.batch):
        group = list(enumerate(train_cases[first : first + args.batch], start=first + 1))
        prompts = [compare_prompt(*case, max_doc_chars=args.doc_chars) for _, (_, case) in group]
        conversations = [[{"role": "user", "content": prompt}] for prompt in prompts]
        drawn = generate_batch(sampler, conversations, count=args.samples)
        for (number, (item, case)), prompt, samples in zip(group, prompts, drawn, strict=True):
            right = teacher.verdict(item, *case)
            shown = [d.page_content for d in (*case[1], *case[2])]
            wrong = [
                reply
                for reply in samples
                if reply.strip() and runtime_status(reply, prompt, shown) is not right.status
            ]
            pair = None
            if not wrong:
                why["every sample agreed"] += 1
            else:
                rejected_text = random.Random(f"{number}").choice(wrong)
                made += 1
                meta = {"question_id": item.id, "step": len(case[1]) // PER_STEP + 1}
                pair = make_pair(prompt, right, right, {**meta, "teacher": "gold"})
                pair["rejected"] = [{"role": "assistant", "content": rejected_text}]
                pairs.append(pair)
            with sampled.open("a") as handle:
                handle.write(json.dumps({"pair": pair, "samples": samples}) + "\n")
        print(f"sampled: {group[-1][0]}/{len(train_cases)}", flush=True)
    data = run_dir / "pairs.jsonl"
    data.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    timings["pairs sampled"] = round(time.perf_counter() - clock)
    print(timings, flush=True)
    labels = [p["meta"]["label"] for p in pairs]
    prior_keep = labels.count("keep") >= labels.count("switch")

    greedy = HFChatModel(checkpoint=str(base), temperature=0.0, max_new_tokens=args.max_new_tokens)
    cases = [case for _, case in eval_cases]
    before = policy_verdicts(greedy, cases, args.doc_chars, run_dir / "before.jsonl", args.batch)
    timings["before measured"] = round(time.perf_counter() - clock)
    print(timings, flush=True)
    out = run_dir / f"switcher-{variant}"
    if not (out / "adapter_config.json").is_file():
        dpo(
            [
                *("--model_name_or_path", str(base), "--data", str(data), "--output_dir", str(out)),
                *("--use_peft", "--lora_r", "16", "--lora_alpha", "32"),
                *("--lora_target_modules", "all-linear", "--beta", "0.1"),
                *("--loss_type", *args.loss_type),
                *(
                    "--learning_rate",
                    str(args.learning_rate),
                    "--num_train_epochs",
                    str(args.epochs),
                ),
                *("--per_device_train_batch_size", "2", "--max_length", "1024"),
                *("--logging_steps", "1", "--report_to", "none"),
                *QUICK_CPU_RUN,
            ]
        )
    timings["trained"] = round(time.perf_counter() - clock)
    trained = HFChatModel(checkpoint=str(out), temperature=0.0, max_new_tokens=args.max_new_tokens)
    after = policy_verdicts(
        trained, cases, args.doc_chars, run_dir / f"after-{variant}.jsonl", args.batch
    )
    timings["after measured"] = round(time.perf_counter() - clock)

    heuristic = ExtractiveReasoner(use_embeddings=False)
    by_heuristic = [heuristic.compare(*case).status for case in cases]
    changed_right = sum(
        b[0] != t and a[0] == t for b, a, t in zip(before, after, eval_truth, strict=True)
    )
    changed_wrong = sum(
        b[0] == t and a[0] != t for b, a, t in zip(before, after, eval_truth, strict=True)
    )
    report = {
        "held-out steps (items 201-350)": len(cases),
        "held-out keep share": round(sum(eval_truth) / len(eval_truth), 3),
        "training pairs (items 1-200)": {"pairs": made, **dict(why), "keep": labels.count("keep")},
        "label prior": {
            "always": "keep" if prior_keep else "switch",
            **judged([prior_keep] * len(cases), eval_truth),
        },
        "heuristic switcher": judged(by_heuristic, eval_truth),
        "Gemma 270M before DPO": judged(
            [status for status, _ in before], eval_truth, [not fell for _, fell in before]
        ),
        "Gemma 270M after DPO": judged(
            [status for status, _ in after], eval_truth, [not fell for _, fell in after]
        ),
        "steps turned right / turned wrong by DPO": [changed_right, changed_wrong],
        "seconds": timings,
    }
    (run_dir / f"report-{variant}.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
