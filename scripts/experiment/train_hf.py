#!/usr/bin/env python3
# Owns training a Hugging Face checkpoint on an experiment's corpus with TRL:
# SFT (SFTTrainer on the corpus's token ids, the loss on the trained turns
# only), or DPO on top of a trained checkpoint (DPOTrainer on the step-aligned
# pairs, against a frozen copy of it). It is what `experiment train-eval
# --base <hf-dir>` runs for each arm; on a machine with a GPU it trains there.
#
# The corpus holds token ids from Qwen2's vocabulary, rendered in the
# Qwen2.5 template the engine serves with, so the checkpoint must use that
# vocabulary (Qwen2, Qwen2.5): this is checked on the first line before
# anything trains, rather than training a model on ids that mean other text.
#
# Usage: python train_hf.py BASE_DIR CONFIG_JSON CORPUS_JSONL OUT_DIR [preferences=PATH]
# Writes OUT_DIR/hf/ (the trained checkpoint), OUT_DIR/train.json (stats) and
# OUT_DIR/curve.jsonl (one loss per step). Exit 1 with one line on stderr on failure.

import json
import math
import os
import sys
import time

# Offline before any Hugging Face import: nothing may be fetched from a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("DISABLE_MLFLOW_INTEGRATION", "TRUE")
os.environ.setdefault("WANDB_DISABLED", "true")

EOS_TEXT = "<|im_end|>"


def fail(message):
    print(f"train-hf: {message}", file=sys.stderr)
    sys.exit(1)


def read_lines(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def labels_of(line):
    """-100 everywhere but the trained spans: [start, end) positions whose token is predicted from the one before."""
    labels = [-100] * len(line["ids"])
    for start, end in line["loss"]:
        labels[start:end] = line["ids"][start:end]
    return labels


def main():
    if len(sys.argv) < 5:
        fail("usage: train_hf.py BASE_DIR CONFIG_JSON CORPUS_JSONL OUT_DIR [preferences=PATH]")
    base_dir, config_path, corpus_path, out_dir = sys.argv[1:5]
    options = dict(argument.split("=", 1) for argument in sys.argv[5:])
    config = json.load(open(config_path, encoding="utf-8"))
    started = time.time()
    # Library chatter goes to stderr; stdout carries our progress lines only.
    real_stdout, sys.stdout = sys.stdout, sys.stderr

    def say(message):
        print(f"train-hf: {message} ({time.time() - started:.0f}s)", file=real_stdout, flush=True)

    import datasets
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as transformers_logging
    from trl import DPOConfig, DPOTrainer, SFTConfig, SFTTrainer

    datasets.disable_progress_bars()
    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    transformers.set_seed(config["seed"])
    gpu = torch.cuda.is_available()
    if not gpu and config.get("threads"):
        torch.set_num_threads(config["threads"])

    if not os.path.exists(os.path.join(base_dir, "config.json")):
        fail(f"{base_dir} has no config.json: --base takes a Hugging Face checkpoint directory (config.json, weights, tokenizer)")
    try:
        tokenizer = AutoTokenizer.from_pretrained(base_dir)
        model = AutoModelForCausalLM.from_pretrained(base_dir, torch_dtype=torch.bfloat16 if gpu else torch.float32)
    except Exception as error:  # noqa: BLE001
        fail(f"cannot load {base_dir}: {type(error).__name__}: {error}")
    if EOS_TEXT not in tokenizer.get_vocab():
        fail(f"{base_dir}'s tokenizer has no {EOS_TEXT}: the corpus is in the Qwen2.5 template; use a Qwen2-vocabulary checkpoint")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    # A turn ends at <|im_end|>, as the engine stops generating there.
    tokenizer.eos_token = EOS_TEXT

    lines = read_lines(corpus_path)
    train = [line for line in lines if line["split"] == "train"]
    heldout = [line for line in lines if line["split"] == "heldout"]
    if not train:
        fail(f"{corpus_path} has no training line")
    sample = train[0]["ids"]
    again = tokenizer(tokenizer.decode(sample), add_special_tokens=False)["input_ids"]
    if again != sample:
        at = next((k for k, (a, b) in enumerate(zip(again, sample)) if a != b), min(len(again), len(sample)))
        fail(
            f"{base_dir}'s tokenizer does not give Qwen2's token ids (the corpus's first line differs at token {at}): "
            "--base takes a checkpoint with Qwen2's vocabulary (Qwen2, Qwen2.5)"
        )
    largest = max(max(line["ids"]) for line in lines)
    if largest >= model.config.vocab_size:
        fail(f"the corpus uses token id {largest}, beyond {base_dir}'s vocab_size {model.config.vocab_size}")
    say(f"{len(train)} training lines, {model.num_parameters():,} parameters, {'GPU' if gpu else 'CPU'}")

    os.makedirs(out_dir, exist_ok=True)
    work_dir = os.path.join(out_dir, "trainer")
    common = dict(
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        eval_strategy="no",
        disable_tqdm=True,
        use_cpu=not gpu,
        bf16=gpu,
        seed=config["seed"],
        data_seed=config["seed"],
        dataloader_num_workers=0,
        dataset_num_proc=None,
        max_grad_norm=1.0,
        weight_decay=0.0,
        lr_scheduler_type="cosine",
        gradient_checkpointing=gpu,
    )

    curve = []

    def schedule(phase, settings):
        """The TrainingArguments one phase takes from its recipe section."""
        return dict(
            output_dir=os.path.join(work_dir, phase),
            max_steps=settings["steps"],
            learning_rate=settings["lr"],
            per_device_train_batch_size=settings["batch"],
            gradient_accumulation_steps=settings.get("accumulation", 1),
            warmup_steps=min(20, settings["steps"] // 10),
            **common,
        )

    def train_logged(trainer, phase):
        """Trains, and adds each step's logged loss to the curve; returns the step logs."""
        trainer.train()
        logged = [entry for entry in trainer.state.log_history if "loss" in entry and "train_runtime" not in entry]
        for number, entry in enumerate(logged, 1):
            curve.append({"step": number, "phase": phase, "loss": round(float(entry["loss"]), 5)})
        return logged

    stats = {"base": os.path.abspath(base_dir), "train_lines": len(train), "heldout_lines": len(heldout), "parameters": model.num_parameters()}
    if "preferences" in options:
        d = config["dpo"]
        pairs = read_lines(options["preferences"])

        limit = d.get("max_length", config["max_length"])

        def row(pair):
            """Prompt, chosen and rejected as text; a prompt too long for `limit` loses its oldest tokens, never the turn."""
            (start, end), (other_start, other_end) = pair["chosen"]["loss"], pair["rejected"]["loss"]
            chosen, rejected = pair["chosen"]["ids"][start:end], pair["rejected"]["ids"][other_start:other_end]
            prompt = pair["chosen"]["ids"][:start]
            room = max(1, limit - max(len(chosen), len(rejected)))
            return {"prompt": tokenizer.decode(prompt[-room:]), "chosen": tokenizer.decode(chosen), "rejected": tokenizer.decode(rejected)}

        rows = [row(pair) for pair in pairs]
        # The reference is rebuilt from the weights, not deep-copied: a deep copy of a model a Trainer has wrapped
        # keeps calling the policy, and the DPO loss then never leaves ln 2.
        reference = AutoModelForCausalLM.from_pretrained(base_dir, torch_dtype=model.dtype)
        reference.eval()
        trainer = DPOTrainer(
            model=model,
            ref_model=reference,
            args=DPOConfig(beta=d["beta"], max_length=None, **schedule("dpo", d)),  # prompts were cut above, from their oldest end
            train_dataset=datasets.Dataset.from_list(rows),
            processing_class=tokenizer,
        )
        say(f"DPO: {len(rows)} pairs, {d['steps']} steps")
        logged = train_logged(trainer, "dpo")
        accuracy = [entry.get("rewards/accuracies") for entry in logged if entry.get("rewards/accuracies") is not None]
        stats["preferences"] = {"pairs": len(rows), "steps": d["steps"], "beta": d["beta"], "final_reward_accuracy": round(float(accuracy[-1]), 3) if accuracy else None}
    else:
        s = config["sft"]
        rows = [{"input_ids": line["ids"][: config["max_length"]], "labels": labels_of(line)[: config["max_length"]]} for line in train]
        trainer = SFTTrainer(
            model=model,
            args=SFTConfig(max_length=config["max_length"], packing=False, **schedule("sft", s)),
            train_dataset=datasets.Dataset.from_list(rows),
            processing_class=tokenizer,
        )
        say(f"SFT: {s['steps']} steps of {s['batch']}")
        train_logged(trainer, "sft")

    model = trainer.accelerator.unwrap_model(trainer.model, keep_fp32_wrapper=False)
    model.eval()
    if heldout:
        # The held-out loss, as the tiny trainer reports it: nats per trained token of the scripted solution's episodes.
        total, count = 0.0, 0
        device = next(model.parameters()).device
        with torch.no_grad():
            for line in heldout:
                ids = torch.tensor([line["ids"][: config["max_length"]]], device=device)
                labels = torch.tensor([labels_of(line)[: config["max_length"]]], device=device)
                target = labels[0, 1:]
                keep = target != -100
                if keep.any():
                    # Logits only where a token is trained: the whole line's would be 150k floats per token.
                    hidden = model.base_model(input_ids=ids).last_hidden_state[0, :-1]
                    logits = model.get_output_embeddings()(hidden[keep]).float()
                    total += torch.nn.functional.cross_entropy(logits, target[keep], reduction="sum").item()
                    count += int(keep.sum())
        stats["heldout_loss"] = round(total / count, 5) if count else None
    losses = [point["loss"] for point in curve]
    stats["steps"] = len(losses)
    stats["final_loss"] = round(sum(losses[-10:]) / len(losses[-10:]), 5) if losses else None
    if losses and not all(math.isfinite(loss) for loss in losses):
        fail(f"a training loss is not finite: {losses[-5:]}")
    model.save_pretrained(os.path.join(out_dir, "hf"), safe_serialization=True)
    tokenizer.save_pretrained(os.path.join(out_dir, "hf"))
    stats["train_seconds"] = round(time.time() - started, 1)
    with open(os.path.join(out_dir, "curve.jsonl"), "w", encoding="utf-8") as handle:
        for point in curve:
            handle.write(json.dumps(point) + "\n")
    with open(os.path.join(out_dir, "train.json"), "w", encoding="utf-8") as handle:
        json.dump(stats, handle, indent=2)
    say(f"trained {stats['steps']} steps, final loss {stats['final_loss']}, held-out loss {stats.get('heldout_loss')}")


if __name__ == "__main__":
    main()
