#!/usr/bin/env python3
"""GRPO against a live `env serve`: TRL's GRPOTrainer with environment_factory, on CPU.

    episode-factory env serve tool-world-v1 --port 8940 --out datasets/grpo &
    scripts/tiny-model.sh
    .cache/python-loaders/bin/python examples/train/grpo_environment.py --url http://127.0.0.1:8940 --steps 2

The model is the tiny Qwen2 that scripts/tiny-model.sh trains on tool-world-v1
episodes (a llama.cpp GGUF file), loaded into transformers' Qwen2ForCausalLM
with its real Qwen2 tokenizer and chat template (TRL's own qwen2_5 template),
so its rollouts call the world's tools. Each rollout is an episode on the
server (clients/python/trl_environment.py): the model's tool calls are method
calls of the environment, answered by the world, and the reward is the
episode's hidden checks, scored on the model's final answer. With
--keep-records every scored episode is kept as a replay-verified record in the
server's --out, so `episode-factory replay` and `audit` check the run.

Prints one JSON object: the steps' logged rewards, tool-call frequencies and
losses, and the episodes scored. Exit status 0 when every step trained with a
finite loss and the rollouts called tools; 1 otherwise, with the reason on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
os.environ.setdefault("WANDB_DISABLED", "true")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "clients", "python"))
DEFAULT_MODEL = os.path.join(ROOT, ".cache", "tiny-model", "current", "tiny-qwen2.gguf")


def fail(message: str):
    print(f"grpo_environment: {message}", file=sys.stderr)
    sys.exit(1)


def load_tiny_model(path: str):
    """The GGUF tiny model as transformers' Qwen2ForCausalLM (with its output bias) and its tokenizer."""
    import gguf
    import numpy as np
    import torch
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

    directory, name = os.path.dirname(path), os.path.basename(path)
    # Reading the tokenizer out of the GGUF takes ~20 s; it is saved next to the model the first time.
    saved = os.path.join(directory, "transformers-tokenizer")
    if os.path.isdir(saved):
        tokenizer = AutoTokenizer.from_pretrained(saved)
    else:
        tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=name)
        tokenizer.save_pretrained(saved)
    reader = gguf.GGUFReader(path)
    fields = {field.name: field for field in reader.fields.values()}

    def value(key):
        return fields[key].contents()

    tensors = {tensor.name: torch.from_numpy(np.array(tensor.data, dtype=np.float32)) for tensor in reader.tensors}
    layers = value("qwen2.block_count")
    hidden = value("qwen2.embedding_length")
    config = Qwen2Config(
        vocab_size=tensors["token_embd.weight"].shape[0],
        hidden_size=hidden,
        intermediate_size=value("qwen2.feed_forward_length"),
        num_hidden_layers=layers,
        num_attention_heads=value("qwen2.attention.head_count"),
        num_key_value_heads=value("qwen2.attention.head_count_kv"),
        rms_norm_eps=value("qwen2.attention.layer_norm_rms_epsilon"),
        max_position_embeddings=value("qwen2.context_length"),
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    config.rope_parameters = {"rope_type": "default", "rope_theta": value("qwen2.rope.freq_base")}
    model = Qwen2ForCausalLM(config)
    with torch.no_grad():
        model.model.embed_tokens.weight.copy_(tensors["token_embd.weight"])
        model.model.norm.weight.copy_(tensors["output_norm.weight"])
        for index, layer in enumerate(model.model.layers):
            prefix = f"blk.{index}."
            layer.input_layernorm.weight.copy_(tensors[prefix + "attn_norm.weight"])
            layer.post_attention_layernorm.weight.copy_(tensors[prefix + "ffn_norm.weight"])
            for ours, theirs in (("attn_q", layer.self_attn.q_proj), ("attn_k", layer.self_attn.k_proj), ("attn_v", layer.self_attn.v_proj),
                                 ("attn_output", layer.self_attn.o_proj), ("ffn_gate", layer.mlp.gate_proj), ("ffn_up", layer.mlp.up_proj),
                                 ("ffn_down", layer.mlp.down_proj)):
                theirs.weight.copy_(tensors[prefix + ours + ".weight"])
                if theirs.bias is not None:
                    theirs.bias.copy_(tensors[prefix + ours + ".bias"])
        # The tiny model's output layer is the tied embedding plus a bias (llama.cpp's output.bias), which Qwen2 lacks.
        head = torch.nn.Linear(hidden, config.vocab_size, bias=True)
        head.weight = model.model.embed_tokens.weight
        head.bias.copy_(tensors["output.bias"])
        model.lm_head = head
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="a running env serve, e.g. http://127.0.0.1:8940")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="the tiny model's GGUF file (scripts/tiny-model.sh)")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--generations", type=int, default=2, help="rollouts per prompt (GRPO's group); at least 2")
    parser.add_argument("--seeds", default="0..1", help="seeds of the prompts, FROM..TO (every task of the lane on each)")
    parser.add_argument("--tasks", default=None, help="comma-separated task ids (default: every task of the lane)")
    parser.add_argument("--agent", default="grpo-tiny", help="names the records' policy actor")
    parser.add_argument("--keep-records", action="store_true", help="keep every scored episode as a record in the server's --out")
    parser.add_argument("--max-completion-length", type=int, default=384)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--temperature", type=float, default=0.7, help="sampling temperature of the rollouts")
    arguments = parser.parse_args()
    if arguments.generations < 2:
        fail("--generations must be at least 2 (GRPO compares the rollouts of a group)")
    if not os.path.exists(arguments.model):
        fail(f"no model at {arguments.model}: run scripts/tiny-model.sh first")

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from episode_factory_env import prompt_rows
    from trl_environment import environment_class, make_environment_reward

    low, high = (int(part) for part in arguments.seeds.split(".."))
    tasks = arguments.tasks.split(",") if arguments.tasks else None
    rows = prompt_rows(arguments.url, range(low, high + 1), tasks, with_tools=False)
    model, tokenizer = load_tiny_model(arguments.model)
    Environment = environment_class(arguments.url, agent=arguments.agent)
    reward = make_environment_reward(keep_records=arguments.keep_records)
    output = tempfile.mkdtemp(prefix="grpo-environment-")
    config = GRPOConfig(
        output_dir=output,
        use_cpu=True,
        bf16=False,
        max_steps=arguments.steps,
        per_device_train_batch_size=arguments.generations,
        num_generations=arguments.generations,
        max_completion_length=arguments.max_completion_length,
        max_tool_calling_iterations=6,
        learning_rate=arguments.learning_rate,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        seed=0,
        temperature=arguments.temperature,
    )
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=[reward], environment_factory=Environment,
                          train_dataset=Dataset.from_list(rows), args=config)
    # The trainer prints its logs on stdout: they go to stderr, so stdout is the one JSON object.
    with contextlib.redirect_stdout(sys.stderr):
        trainer.train()
    logs = [entry for entry in trainer.state.log_history if "loss" in entry]
    summary = {
        "steps": len(logs),
        "rewards": [entry.get("reward") for entry in logs],
        "tool_call_frequency": [entry.get("tools/call_frequency") for entry in logs],
        "tool_failure_frequency": [entry.get("tools/failure_frequency") for entry in logs],
        "losses": [entry.get("loss") for entry in logs],
        "log": logs,
    }
    print(json.dumps(summary))
    if len(logs) != arguments.steps or not all(isinstance(loss, (int, float)) and math.isfinite(loss) for loss in summary["losses"]):
        fail(f"expected {arguments.steps} steps with finite losses, got {summary['losses']}")
    if not any((frequency or 0) > 0 for frequency in summary["tool_call_frequency"]):
        fail("no rollout called a tool")


if __name__ == "__main__":
    main()
