#!/usr/bin/env python3
"""Which chat templates want tool-call arguments as objects, and which as JSON strings?

Renders one SFT row of a dataset directory D (loaded with `datasets.load_dataset(D, "sft")`, so its arguments
are objects) with TRL's packaged chat templates for Qwen2.5, Llama 3.1 and DeepSeek-V3, through a tokenizer built
here (nothing is downloaded), twice: with the arguments as objects and as strings (`json.dumps` of the object).
For each rendering it reports how the arguments came out:

  single   the arguments appear once-encoded, e.g. `{"query": "sync"}`        (what the model should learn)
  double   they appear as a JSON string of JSON, e.g. `"{\\"query\\": \\"sync\\"}"` (the model learns to emit a string)
  error    the template raised (message included)
  missing  neither form is in the output (the template dropped or mangled them)

The messages are rendered exactly as loaded: each carries only the keys that apply to it (the card declares every
message as a `Json` value, so no loader pads it with nulls), which matters because some templates (Llama 3.1,
DeepSeek-V3) test whether a key such as `tool_calls` is there, not whether it is null. `null_keys` counts any null
the loaded messages hold anyway.

Usage: python template_conventions.py D            (JSON on stdout)
"""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Template file in trl/chat_templates -> the special tokens it emits, its bos and eos tokens.
TEMPLATES = {
    "qwen2_5": {"bos": None, "eos": "<|im_end|>", "special": ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]},
    "llama3_1": {
        "bos": "<|begin_of_text|>",
        "eos": "<|eot_id|>",
        "special": [
            "<|begin_of_text|>",
            "<|start_header_id|>",
            "<|end_header_id|>",
            "<|eot_id|>",
            "<|eom_id|>",
            "<|python_tag|>",
        ],
    },
    "deepseekv3": {
        "bos": "<｜begin▁of▁sentence｜>",
        "eos": "<｜end▁of▁sentence｜>",
        "special": [
            "<｜begin▁of▁sentence｜>",
            "<｜end▁of▁sentence｜>",
            "<｜User｜>",
            "<｜Assistant｜>",
            "<｜tool▁calls▁begin｜>",
            "<｜tool▁calls▁end｜>",
            "<｜tool▁call▁begin｜>",
            "<｜tool▁call▁end｜>",
            "<｜tool▁sep｜>",
            "<｜tool▁outputs▁begin｜>",
            "<｜tool▁outputs▁end｜>",
            "<｜tool▁output▁begin｜>",
            "<｜tool▁output▁end｜>",
        ],
    },
}


def pick_row(rows):
    """The first row whose assistant turns make one tool call each (Llama 3.1's template allows no more)."""
    for row in rows:
        calls = [message["tool_calls"] for message in row["messages"] if message.get("tool_calls")]
        if calls and all(len(turn) == 1 for turn in calls):
            return row
    return None


def with_arguments(messages, as_string: bool):
    result = []
    for message in messages:
        message = dict(message)
        if message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                function = dict(call["function"])
                if as_string:
                    function["arguments"] = json.dumps(function["arguments"], ensure_ascii=False)
                calls.append({**call, "function": function})
            message["tool_calls"] = calls
        result.append(message)
    return result


def classify(text: str, argument_objects) -> str:
    outcomes = set()
    for arguments in argument_objects:
        single = json.dumps(arguments, ensure_ascii=False)
        double = json.dumps(single, ensure_ascii=False)
        if double in text:
            outcomes.add("double")
        elif single in text:
            outcomes.add("single")
        else:
            outcomes.add("missing")
    if len(outcomes) == 1:
        return outcomes.pop()
    return "mixed: " + ", ".join(sorted(outcomes))


def build_tokenizer(corpus_texts, spec, chat_template):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1024,
        special_tokens=spec["special"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(corpus_texts, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token=spec["bos"], eos_token=spec["eos"])
    tokenizer.chat_template = chat_template
    return tokenizer


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: template_conventions.py DATASET_DIR", file=sys.stderr)
        return 2
    real_stdout = sys.stdout
    sys.stdout = sys.stderr

    import datasets
    import transformers
    import trl

    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    transformers.utils.logging.set_verbosity_error()

    rows = datasets.load_dataset(os.path.abspath(sys.argv[1]), "sft")["train"]
    row = pick_row(rows)
    if row is None:
        print("template_conventions: no SFT row makes exactly one tool call per assistant turn", file=sys.stderr)
        return 1
    argument_objects = [
        call["function"]["arguments"] for message in row["messages"] for call in (message.get("tool_calls") or [])
    ]
    if not all(isinstance(arguments, dict) for arguments in argument_objects):
        print("template_conventions: the loaded arguments are not objects (export with --arguments object)", file=sys.stderr)
        return 1
    corpus_texts = [message["content"] or "" for message in row["messages"]] + [json.dumps(row["tools"])]

    directory = os.path.join(os.path.dirname(trl.__file__), "chat_templates")
    results = {}
    for name, spec in TEMPLATES.items():
        with open(os.path.join(directory, f"{name}.jinja"), encoding="utf-8") as handle:
            template = handle.read()
        tokenizer = build_tokenizer(corpus_texts, spec, template)
        results[name] = {}
        for form in ("object", "string"):
            messages = with_arguments(row["messages"], as_string=form == "string")
            try:
                text = tokenizer.apply_chat_template(messages, tools=row["tools"], tokenize=False)
            except Exception as error:  # noqa: BLE001  (jinja2 TemplateError, TypeError, ...)
                results[name][form] = f"error: {type(error).__name__}: {str(error).splitlines()[0][:160]}"
                continue
            results[name][form] = classify(text, argument_objects)

    def verdict(name: str) -> str:
        single = [form for form in ("object", "string") if results[name][form] == "single"]
        return single[0] if len(single) == 1 else ("either" if single else "neither")

    report = {
        "record_id": row["record_id"],
        "tool_calls": len(argument_objects),
        "first_arguments": argument_objects[0],
        "templates": {name: f"trl/chat_templates/{name}.jinja" for name in TEMPLATES},
        "results": results,
        # Which argument form each template renders single-encoded, from the rows exactly as loaded.
        "needs": {name: verdict(name) for name in TEMPLATES},
        "null_keys": sum(1 for message in row["messages"] for value in message.values() if value is None),
        "versions": {"trl": trl.__version__, "transformers": transformers.__version__, "datasets": datasets.__version__},
    }
    sys.stdout = real_stdout
    print(json.dumps(report, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
