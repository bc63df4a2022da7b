#!/usr/bin/env python3
"""Proof by training: a tiny model learns from an episode-factory dataset.

Given a dataset directory D written by

    episode-factory export sft D --arguments object
    episode-factory export dpo D --arguments object
    episode-factory card D

this script loads both configs with Hugging Face `datasets`, trains a byte-level
BPE tokenizer on the exports, builds a tiny randomly initialised Qwen2-shaped
causal LM, trains it with TRL's SFTTrainer (assistant-only loss, Qwen2.5 chat
template with tools) and then DPOTrainer (frozen reference copy of the SFT
model), and checks that both losses are finite and fall. Nothing is downloaded.

Usage: python train_tiny.py D [--json] [--sft-steps 30] [--dpo-steps 20]
Exit status: 0 when both phases trained and their losses fell, 1 otherwise
(with one line on stderr saying why).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import math
import os
import sys
import tempfile
import time
from typing import NoReturn

# Offline before any Hugging Face import: nothing may be fetched from a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("DISABLE_MLFLOW_INTEGRATION", "TRUE")
os.environ.setdefault("WANDB_DISABLED", "true")

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# The "loss fell" check: the mean of the last WINDOW logged losses must be at least MIN_DROP (relative) below the
# mean of the first WINDOW. Averaging smooths out batch-to-batch noise; the margin keeps noise from passing as learning.
WINDOW = 5
MIN_DROP = 0.10


def fail(message: str) -> NoReturn:
    print(f"train_tiny: {message}", file=sys.stderr)
    sys.exit(1)


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", help="dataset directory with the sft and dpo configs (README.md front matter)")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--sft-steps", type=int, default=30)
    parser.add_argument("--dpo-steps", type=int, default=20)
    parser.add_argument("--sft-lr", type=float, default=3e-3)
    parser.add_argument("--dpo-lr", type=float, default=5e-4)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--max-length", type=int, default=1024)
    parser.add_argument("--vocab-size", type=int, default=4096)
    parser.add_argument("--seed", type=int, default=0)
    # One thread: the model is so small that a second thread buys little, and on a busy 2-core machine two
    # threads that wait on each other made a run 3x slower (142 s against 47 s).
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1; 0: torch's own choice)")
    parser.add_argument("--work-dir", help="where trainer output goes (default: a temporary directory, removed)")
    return parser.parse_args()


def version_tuple(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def corpus(sft_rows, dpo_rows):
    """Text the tokenizer learns from: message contents, tool calls as JSON, tool schemas."""

    def from_messages(messages):
        for message in messages:
            if message.get("content"):
                yield message["content"]
            for call in message.get("tool_calls") or []:
                function = call["function"]
                yield json.dumps({"name": function["name"], "arguments": function["arguments"]}, ensure_ascii=False)

    def from_tools(tools):
        for tool in tools or []:
            yield json.dumps(tool, ensure_ascii=False)

    for row in sft_rows:
        yield from from_messages(row["messages"])
        yield from from_tools(row["tools"])
    for row in dpo_rows:
        for column in ("prompt", "chosen", "rejected"):
            yield from from_messages(row[column])
        yield from from_tools(row["tools"])


def build_tokenizer(sft_rows, dpo_rows, vocab_size: int, chat_template: str):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    # Byte-level, without GPT-2's word-splitting regex, so merges may span punctuation and spaces: the tool
    # schemas (repeated in every row) then cost a few hundred tokens instead of ~1,800 and a whole conversation
    # fits in --max-length 1024. Tokens are capped at 32 bytes so they stay pieces, not whole schemas.
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        max_token_length=32,
        show_progress=False,
    )
    backend.train_from_iterator(corpus(sft_rows, dpo_rows), trainer=trainer)
    # As Qwen2.5 Instruct: a turn ends with <|im_end|> (the eos the model learns to emit), <|endoftext|> pads.
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>"],
        model_max_length=1 << 20,
    )
    tokenizer.chat_template = chat_template
    return tokenizer


def build_model(tokenizer, seed: int):
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = Qwen2ForCausalLM(config)
    return model


def losses_of(trainer, key: str = "loss") -> list[float]:
    return [float(entry[key]) for entry in trainer.state.log_history if key in entry and "train_runtime" not in entry]


def judge(phase: str, losses: list[float], steps: int) -> dict:
    """Finite, and the mean of the last WINDOW logged losses at least MIN_DROP below the mean of the first WINDOW."""
    if len(losses) != steps:
        fail(f"{phase}: expected {steps} logged losses, got {len(losses)}")
    if not all(math.isfinite(loss) for loss in losses):
        fail(f"{phase}: a loss is not finite: {losses}")
    window = max(1, min(WINDOW, len(losses) // 2))
    first_mean = sum(losses[:window]) / window
    last_mean = sum(losses[-window:]) / window
    relative_drop = (first_mean - last_mean) / first_mean if first_mean > 0 else 0.0
    fell = last_mean < first_mean and relative_drop >= MIN_DROP
    return {
        "steps": steps,
        "loss_first": losses[0],
        "loss_last": losses[-1],
        "losses": [round(loss, 6) for loss in losses],
        "criterion": f"mean of last {window} logged losses at least {MIN_DROP:.0%} below mean of first {window}",
        "first_window_mean": first_mean,
        "last_window_mean": last_mean,
        "relative_drop": relative_drop,
        "finite": True,
        "fell": fell,
    }


def main() -> int:
    arguments = parse_arguments()
    real_stdout = sys.stdout
    # Library chatter (progress bars, trainer log dicts, prints) goes to stderr; stdout carries only our result.
    sys.stdout = sys.stderr
    wall_started = time.perf_counter()

    import datasets

    if version_tuple(datasets.__version__) < (4, 7):
        fail(
            f"datasets {datasets.__version__} is too old: the card's Json() features need datasets >= 4.7 "
            "(pip install -U 'datasets>=4.7')"
        )
    import torch
    import transformers
    import trl
    from transformers.utils import logging as transformers_logging
    from trl import DPOConfig, DPOTrainer, SFTConfig, SFTTrainer

    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    transformers.set_seed(arguments.seed)
    if arguments.threads:
        torch.set_num_threads(arguments.threads)
    torch.use_deterministic_algorithms(True, warn_only=True)

    dataset_dir = os.path.abspath(arguments.dataset)
    started = time.perf_counter()
    try:
        sft_rows = datasets.load_dataset(dataset_dir, "sft")["train"]
        dpo_rows = datasets.load_dataset(dataset_dir, "dpo")["train"]
    except Exception as error:  # noqa: BLE001
        fail(f"cannot load the sft and dpo configs of {dataset_dir}: {type(error).__name__}: {error}")
    first_call = next(
        (call for row in sft_rows for message in row["messages"] for call in (message.get("tool_calls") or [])), None
    )
    if first_call is not None and not isinstance(first_call["function"]["arguments"], dict):
        fail(
            "tool-call arguments load as "
            f"{type(first_call['function']['arguments']).__name__}, not objects: export with --arguments object "
            "and load through the dataset card (datasets >= 4.7)"
        )
    load_seconds = time.perf_counter() - started

    template_path = os.path.join(os.path.dirname(trl.__file__), "chat_templates", "qwen2_5.jinja")
    with open(template_path, encoding="utf-8") as handle:
        chat_template = handle.read()

    started = time.perf_counter()
    tokenizer = build_tokenizer(sft_rows, dpo_rows, arguments.vocab_size, chat_template)
    tokenizer_seconds = time.perf_counter() - started

    model = build_model(tokenizer, arguments.seed)
    parameters = sum(parameter.numel() for parameter in model.parameters())

    work = contextlib.ExitStack()
    atexit.register(work.close)
    work_dir = arguments.work_dir or work.enter_context(tempfile.TemporaryDirectory(prefix="train-tiny-"))
    common = dict(
        per_device_train_batch_size=arguments.batch_size,
        gradient_accumulation_steps=1,
        logging_steps=1,
        logging_first_step=True,
        report_to=[],
        save_strategy="no",
        eval_strategy="no",
        disable_tqdm=True,
        use_cpu=True,
        seed=arguments.seed,
        data_seed=arguments.seed,
        dataloader_num_workers=0,
        max_length=arguments.max_length,
        dataset_num_proc=None,
        bf16=False,
        fp16=False,
        weight_decay=0.0,
        max_grad_norm=1.0,
        lr_scheduler_type="constant_with_warmup",
        warmup_steps=2,
    )

    # --- SFT -------------------------------------------------------------------------------------------------
    sft_config = SFTConfig(
        output_dir=os.path.join(work_dir, "sft"),
        max_steps=arguments.sft_steps,
        learning_rate=arguments.sft_lr,
        assistant_only_loss=True,
        packing=False,
        **common,
    )
    started = time.perf_counter()
    sft_trainer = SFTTrainer(model=model, args=sft_config, train_dataset=sft_rows, processing_class=tokenizer)
    swapped_template = sft_trainer.chat_template
    prepared = sft_trainer.train_dataset
    # TRL turns the template's assistant masks into labels (-100 elsewhere), then truncates to max_length.
    if "labels" not in prepared.column_names:
        fail("sft: the prepared dataset has no labels column, so assistant_only_loss was not applied")
    sft_tokens = sum(len(ids) for ids in prepared["input_ids"])
    sft_loss_tokens = sum(sum(1 for label in labels if label != -100) for labels in prepared["labels"])
    if not 0 < sft_loss_tokens < sft_tokens:
        fail(f"sft: {sft_loss_tokens} of {sft_tokens} tokens carry loss, so assistant_only_loss did not mask")
    sft_prepare_seconds = time.perf_counter() - started
    sft_trainer.train()
    sft_seconds = time.perf_counter() - started
    sft = judge("sft", losses_of(sft_trainer), arguments.sft_steps)
    sft.update(
        examples=len(prepared),
        examples_in_export=len(sft_rows),
        examples_seen=arguments.sft_steps * arguments.batch_size,
        assistant_only_loss=bool(sft_config.assistant_only_loss),
        chat_template="qwen2_5_training (swapped in by TRL)"
        if swapped_template is not None and "{% generation %}" in swapped_template.replace("{%-", "{%")
        else "qwen2_5",
        tokens=sft_tokens,
        loss_tokens=sft_loss_tokens,
        examples_at_max_length=sum(1 for ids in prepared["input_ids"] if len(ids) >= arguments.max_length),
        max_length=arguments.max_length,
        learning_rate=arguments.sft_lr,
        seconds=round(sft_seconds, 2),
        prepare_seconds=round(sft_prepare_seconds, 2),
    )

    # --- DPO, from the SFT model, against a frozen copy of it ------------------------------------------------
    # The reference is rebuilt from the config and the SFT weights, not copy.deepcopy'd: the first Trainer's
    # accelerate wrapper patches `model.forward` with a closure over the original model, and a deep copy would keep
    # calling the policy (DPO loss then sits at ln 2 forever).
    policy = sft_trainer.accelerator.unwrap_model(sft_trainer.model, keep_fp32_wrapper=False)
    reference = type(policy)(policy.config)
    reference.load_state_dict(policy.state_dict())
    reference.eval()
    for parameter in reference.parameters():
        parameter.requires_grad_(False)
    dpo_config = DPOConfig(
        output_dir=os.path.join(work_dir, "dpo"),
        max_steps=arguments.dpo_steps,
        learning_rate=arguments.dpo_lr,
        beta=0.1,
        **common,
    )
    started = time.perf_counter()
    dpo_trainer = DPOTrainer(
        model=policy, ref_model=reference, args=dpo_config, train_dataset=dpo_rows, processing_class=tokenizer
    )
    prepared_pairs = dpo_trainer.train_dataset
    # Tokens in the prompt+chosen and prompt+rejected sequences, as the collator truncates them (keep_start).
    limit = arguments.max_length
    dpo_lengths = [
        (len(prompt) + len(chosen), len(prompt) + len(rejected))
        for prompt, chosen, rejected in zip(
            prepared_pairs["prompt_ids"], prepared_pairs["chosen_ids"], prepared_pairs["rejected_ids"]
        )
    ]
    dpo_tokens = sum(min(chosen, limit) + min(rejected, limit) for chosen, rejected in dpo_lengths)
    dpo_prepare_seconds = time.perf_counter() - started
    dpo_trainer.train()
    dpo_seconds = time.perf_counter() - started
    dpo = judge("dpo", losses_of(dpo_trainer), arguments.dpo_steps)
    accuracies = losses_of(dpo_trainer, "rewards/accuracies")
    margins = losses_of(dpo_trainer, "rewards/margins")
    dpo.update(
        examples=len(prepared_pairs),
        examples_in_export=len(dpo_rows),
        examples_seen=arguments.dpo_steps * arguments.batch_size,
        assistant_only_loss=False,
        loss_on="chosen/rejected completions only (DPO)",
        reference="frozen copy of the SFT model",
        beta=dpo_config.beta,
        tokens=dpo_tokens,
        examples_truncated=sum(1 for chosen, rejected in dpo_lengths if max(chosen, rejected) > limit),
        max_length=limit,
        learning_rate=arguments.dpo_lr,
        reward_accuracy_last=accuracies[-1] if accuracies else None,
        reward_margin_last=margins[-1] if margins else None,
        seconds=round(dpo_seconds, 2),
        prepare_seconds=round(dpo_prepare_seconds, 2),
    )
    work.close()

    result = {
        "dataset": dataset_dir,
        "ok": sft["fell"] and dpo["fell"],
        "sft": sft,
        "dpo": dpo,
        "tokenizer": {"kind": "byte-level BPE trained on the exports", "vocab_size": len(tokenizer)},
        "model": {
            "architecture": "Qwen2ForCausalLM, random init",
            "hidden_size": 64,
            "layers": 2,
            "heads": 4,
            "kv_heads": 2,
            "intermediate_size": 128,
            "parameters": parameters,
        },
        "seconds": {
            "load": round(load_seconds, 2),
            "tokenizer": round(tokenizer_seconds, 2),
            "sft": round(sft_seconds, 2),
            "dpo": round(dpo_seconds, 2),
            "total": round(time.perf_counter() - wall_started, 2),
        },
        "torch_threads": torch.get_num_threads(),
        "versions": {
            "trl": trl.__version__,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "datasets": datasets.__version__,
            "python": sys.version.split()[0],
        },
    }
    sys.stdout = real_stdout
    if arguments.json:
        print(json.dumps(result))
    else:
        for phase in ("sft", "dpo"):
            entry = result[phase]
            print(
                f"{phase}: {entry['steps']} steps on {entry['examples']} examples, loss {entry['loss_first']:.4f} -> "
                f"{entry['loss_last']:.4f} (mean of first/last {WINDOW}: {entry['first_window_mean']:.4f} -> "
                f"{entry['last_window_mean']:.4f}), {entry['tokens']} tokens, {entry['seconds']} s"
            )
        print(
            f"tokenizer vocab {result['tokenizer']['vocab_size']}, model {parameters} parameters, "
            f"assistant_only_loss {sft['assistant_only_loss']}; trl {trl.__version__}, transformers "
            f"{transformers.__version__}, torch {torch.__version__}, datasets {datasets.__version__}"
        )
    for phase, entry in (("sft", sft), ("dpo", dpo)):
        if not entry["fell"]:
            fail(
                f"{phase}: loss did not fall by {MIN_DROP:.0%} (mean of first {WINDOW} logged losses "
                f"{entry['first_window_mean']:.4f}, mean of last {WINDOW} {entry['last_window_mean']:.4f})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
