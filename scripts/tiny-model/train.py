# Owns training the tiny model and writing it as a llama.cpp GGUF file.
#
# The model is a qwen2-architecture causal LM (RMSNorm, q/k/v with biases,
# NEOX rotary embeddings, SwiGLU), written out with llama.cpp's qwen2 tensor
# names and the real Qwen2 tokenizer copied from llama.cpp's vocab file, so
# llama.cpp (through node-llama-cpp) runs it like any Qwen2.5 model.
#
# Why it trains cheaply on two CPU cores:
# - Vocabulary: only the ~1,100 token ids the training split uses get their
#   own rows. Every other id of the 151,936 shares ONE embedding row and ONE
#   output bias, trained as a single class whose logit carries log(count):
#   exactly the full-vocabulary softmax of a model whose unused rows are tied
#   together, so the written file (the shared row copied into every unused
#   slot) is the model that was trained, and unused ids are pushed down by the
#   loss like any wrong token.
# - Prefix: every episode starts with the same system turn and tool catalog
#   (~1,800 tokens). Each step runs that prefix once and lets the batch's
#   episode tails attend to its keys and values; gradients flow through both.
#
# Usage: python train.py CONFIG CORPUS_JSONL VOCAB_GGUF TEMPLATE_JINJA OUT_GGUF OUT_STATS_JSON
# The forward pass is checked against transformers' Qwen2ForCausalLM before
# training, so the tensor layout written is the one llama.cpp's qwen2 expects.

import json
import math
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

import gguf

EOS_TEXT = "<|im_end|>"


class TinyQwen2(torch.nn.Module):
    """Qwen2 over a compact vocabulary: rows 0..U-1 are the used ids, row U is shared by every unused id."""

    def __init__(self, m, compact_vocab):
        super().__init__()
        self.m = m
        d, h, kv = m["hidden"], m["heads"], m["kv_heads"]
        self.hd = d // h
        self.embed = torch.nn.Parameter(torch.randn(compact_vocab, d) * 0.02)
        self.out_bias = torch.nn.Parameter(torch.zeros(compact_vocab))
        self.layers = torch.nn.ModuleList()
        for _ in range(m["layers"]):
            layer = torch.nn.Module()
            layer.attn_norm = torch.nn.Parameter(torch.ones(d))
            layer.q = torch.nn.Linear(d, h * self.hd, bias=True)
            layer.k = torch.nn.Linear(d, kv * self.hd, bias=True)
            layer.v = torch.nn.Linear(d, kv * self.hd, bias=True)
            layer.o = torch.nn.Linear(h * self.hd, d, bias=False)
            layer.ffn_norm = torch.nn.Parameter(torch.ones(d))
            layer.gate = torch.nn.Linear(d, m["ffn"], bias=False)
            layer.up = torch.nn.Linear(d, m["ffn"], bias=False)
            layer.down = torch.nn.Linear(m["ffn"], d, bias=False)
            for lin in (layer.q, layer.k, layer.v, layer.o, layer.gate, layer.up, layer.down):
                torch.nn.init.normal_(lin.weight, std=0.02)
                if lin.bias is not None:
                    torch.nn.init.zeros_(lin.bias)
            self.layers.append(layer)
        self.out_norm = torch.nn.Parameter(torch.ones(d))

    def norm(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.m["rms_eps"]) * w

    def rope(self, x, pos):
        # NEOX layout (rotate halves), as HF Qwen2 and llama.cpp's qwen2 use.
        half = self.hd // 2
        inv = self.m["rope_base"] ** (-torch.arange(0, half, dtype=torch.float32) / half)
        ang = pos[:, None].float() * inv[None, :]
        cos, sin = torch.cat([ang.cos()] * 2, -1), torch.cat([ang.sin()] * 2, -1)
        x1, x2 = x[..., :half], x[..., half:]
        return x * cos + torch.cat([-x2, x1], -1) * sin

    def forward(self, ids, pos, past=None):
        """ids [B, S] at positions pos [S]; past: per layer (k, v) [1, KV, P, hd] of a shared prefix. Returns hidden [B, S, d] and this call's (k, v)."""
        B, S = ids.shape
        h, kv, hd = self.m["heads"], self.m["kv_heads"], self.hd
        x = self.embed[ids]
        P = 0 if past is None else past[0][0].shape[2]
        causal = torch.ones(S, S, dtype=torch.bool).tril()
        mask = causal if P == 0 else torch.cat([torch.ones(S, P, dtype=torch.bool), causal], 1)
        kvs = []
        for i, layer in enumerate(self.layers):
            a = self.norm(x, layer.attn_norm)
            q = self.rope(layer.q(a).view(B, S, h, hd).transpose(1, 2), pos)
            k = self.rope(layer.k(a).view(B, S, kv, hd).transpose(1, 2), pos)
            v = layer.v(a).view(B, S, kv, hd).transpose(1, 2)
            kvs.append((k, v))
            if past is not None:
                k = torch.cat([past[i][0].expand(B, -1, -1, -1), k], 2)
                v = torch.cat([past[i][1].expand(B, -1, -1, -1), v], 2)
            if kv != h:
                k, v = k.repeat_interleave(h // kv, 1), v.repeat_interleave(h // kv, 1)
            att = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            x = x + layer.o(att.transpose(1, 2).reshape(B, S, h * hd))
            f = self.norm(x, layer.ffn_norm)
            x = x + layer.down(F.silu(layer.gate(f)) * layer.up(f))
        return self.norm(x, self.out_norm), kvs

    def logits(self, hidden, unused_count):
        """Logits over the compact classes; the last (shared) class stands for all unused ids at once."""
        z = hidden @ self.embed.T + self.out_bias
        return torch.cat([z[..., :-1], z[..., -1:] + math.log(unused_count)], -1)


def check_against_transformers(model, m):
    """The forward pass equals transformers' Qwen2 with the same weights (so the tensor layout is qwen2's)."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    V = model.embed.shape[0]
    cfg = Qwen2Config(vocab_size=V, hidden_size=m["hidden"], intermediate_size=m["ffn"], num_hidden_layers=m["layers"],
                      num_attention_heads=m["heads"], num_key_value_heads=m["kv_heads"], rms_norm_eps=m["rms_eps"],
                      rope_theta=m["rope_base"], max_position_embeddings=m["context_length"], tie_word_embeddings=True,
                      attn_implementation="eager")
    cfg.rope_parameters = {"rope_type": "default", "rope_theta": m["rope_base"]}
    ref = Qwen2ForCausalLM(cfg).eval()
    with torch.no_grad():
        g = torch.Generator().manual_seed(0)
        ids = torch.randint(0, V, (1, 40), generator=g)
        # Random weights make the comparison meaningful (identity norms and zero biases would hide mistakes).
        saved = [p.detach().clone() for p in model.parameters()]
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=g) * 0.1)
        ref.model.embed_tokens.weight.copy_(model.embed)
        ref.model.norm.weight.copy_(model.out_norm)
        for ours, theirs in zip(model.layers, ref.model.layers):
            theirs.input_layernorm.weight.copy_(ours.attn_norm)
            theirs.post_attention_layernorm.weight.copy_(ours.ffn_norm)
            for a, b in ((ours.q, theirs.self_attn.q_proj), (ours.k, theirs.self_attn.k_proj), (ours.v, theirs.self_attn.v_proj),
                         (ours.o, theirs.self_attn.o_proj), (ours.gate, theirs.mlp.gate_proj), (ours.up, theirs.mlp.up_proj),
                         (ours.down, theirs.mlp.down_proj)):
                b.weight.copy_(a.weight)
                if a.bias is not None:
                    b.bias.copy_(a.bias)
        theirs_logits = ref(ids).logits
        # Split the same sequence into a prefix and a tail, as training does.
        head, past = model(ids[:, :25], torch.arange(25))
        tail, _ = model(ids[:, 25:], torch.arange(25, 40), past)
        ours_logits = torch.cat([head, tail], 1) @ model.embed.T
        for p, s in zip(model.parameters(), saved):
            p.copy_(s)
    diff = (ours_logits - theirs_logits).abs().max().item()
    if diff > 1e-3:
        sys.exit(f"tiny-model: the forward pass differs from transformers' Qwen2 by {diff}; fix train.py before writing a GGUF")
    return diff


def read_vocab(path):
    reader = gguf.GGUFReader(path)

    def field(name):
        f = reader.fields[name]
        return f.contents()

    return {
        "tokens": field("tokenizer.ggml.tokens"),
        "token_type": field("tokenizer.ggml.token_type"),
        "merges": field("tokenizer.ggml.merges"),
        "model": field("tokenizer.ggml.model"),
        "pre": field("tokenizer.ggml.pre"),
        "bos": field("tokenizer.ggml.bos_token_id"),
        "pad": field("tokenizer.ggml.padding_token_id"),
    }


def write_gguf(path, model, m, used, vocab, template):
    tokens = vocab["tokens"]
    n_vocab = len(tokens)
    eos = tokens.index(EOS_TEXT)
    U = len(used)
    # Every unused id gets the shared row: the file is the model that was trained.
    index = np.full(n_vocab, U, dtype=np.int64)
    index[np.array(used)] = np.arange(U)
    embed = model.embed.detach().numpy()[index]
    bias = model.out_bias.detach().numpy()[index]
    w = gguf.GGUFWriter(path, "qwen2")
    w.add_name("tiny-qwen2 (episode-factory issue 19)")
    w.add_context_length(m["context_length"])
    w.add_embedding_length(m["hidden"])
    w.add_block_count(m["layers"])
    w.add_feed_forward_length(m["ffn"])
    w.add_head_count(m["heads"])
    w.add_head_count_kv(m["kv_heads"])
    w.add_rope_freq_base(m["rope_base"])
    w.add_layer_norm_rms_eps(m["rms_eps"])
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_tokenizer_model(vocab["model"])
    w.add_tokenizer_pre(vocab["pre"])
    w.add_token_list(tokens)
    w.add_token_types(vocab["token_type"])
    w.add_token_merges(vocab["merges"])
    # <|im_end|> ends an assistant turn, so it is the end-of-generation token.
    w.add_eos_token_id(eos)
    w.add_bos_token_id(vocab["bos"])
    w.add_pad_token_id(vocab["pad"])
    w.add_add_bos_token(False)
    w.add_chat_template(template)
    f32 = lambda t: t.detach().numpy().astype(np.float32)
    # The tied embedding is the one big matrix (151,936 x hidden): F16 keeps the file small.
    w.add_tensor("token_embd.weight", embed.astype(np.float16))
    w.add_tensor("output.bias", bias.astype(np.float32))
    w.add_tensor("output_norm.weight", f32(model.out_norm))
    for i, layer in enumerate(model.layers):
        w.add_tensor(f"blk.{i}.attn_norm.weight", f32(layer.attn_norm))
        w.add_tensor(f"blk.{i}.attn_q.weight", f32(layer.q.weight))
        w.add_tensor(f"blk.{i}.attn_q.bias", f32(layer.q.bias))
        w.add_tensor(f"blk.{i}.attn_k.weight", f32(layer.k.weight))
        w.add_tensor(f"blk.{i}.attn_k.bias", f32(layer.k.bias))
        w.add_tensor(f"blk.{i}.attn_v.weight", f32(layer.v.weight))
        w.add_tensor(f"blk.{i}.attn_v.bias", f32(layer.v.bias))
        w.add_tensor(f"blk.{i}.attn_output.weight", f32(layer.o.weight))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", f32(layer.ffn_norm))
        w.add_tensor(f"blk.{i}.ffn_gate.weight", f32(layer.gate.weight))
        w.add_tensor(f"blk.{i}.ffn_up.weight", f32(layer.up.weight))
        w.add_tensor(f"blk.{i}.ffn_down.weight", f32(layer.down.weight))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return eos


def shared_prefix(lines):
    """The system turn and catalog every episode starts with, cut before the first trained token: the longest start all lines share.

    A line played under a changed catalog (its id ends in #catalogN) has another system turn: it is left out here and trains whole."""
    plain = [line for line in lines if "#catalog" not in line["record_id"]]
    first = plain[0]["ids"]
    P = min(len(line["ids"]) for line in plain)
    for line in plain:
        ids = line["ids"]
        k = 0
        while k < P and ids[k] == first[k]:
            k += 1
        P = k
    return min(P, min(line["loss"][0][0] for line in plain if line["loss"]) - 1)


def train_preferences(model, path, d, to_compact, prefix, P, unused, rng, curve, started):
    """DPO on step-aligned pairs, against a frozen copy of the model as it was: beta, steps, batch and lr from d."""
    import copy

    pairs = [json.loads(line) for line in open(path)]
    if not pairs:
        sys.exit(f"tiny-model: {path} holds no preference pairs")
    reference = copy.deepcopy(model).eval()
    for p in reference.parameters():
        p.requires_grad_(False)
    head = prefix[0].tolist()

    def side(s):
        ids = to_compact[np.array(s["ids"])]
        start, end = s["loss"]
        shared = len(ids) > P and ids[:P].tolist() == head
        offset = P if shared else 0
        return ids[offset:-1], ids[offset + 1:], start - offset - 1, end - offset - 1, shared

    def logps(net, items):
        """Summed log-probability of each item's trained span: items that share the prefix attend to it, the others run whole."""
        out = []
        for shared in (True, False):
            group = [(k, item) for k, item in enumerate(items) if item[4] == shared]
            if not group:
                continue
            S = max(len(item[0]) for _, item in group)
            ids = torch.zeros(len(group), S, dtype=torch.long)
            for j, (_, item) in enumerate(group):
                ids[j, : len(item[0])] = torch.from_numpy(item[0])
            if shared:
                past = net(prefix, torch.arange(P))[1]
                hidden, _ = net(ids, torch.arange(P, P + S), past)
            else:
                hidden, _ = net(ids, torch.arange(S))
            for j, (k, item) in enumerate(group):
                lo, hi = item[2], item[3]
                logits = net.logits(hidden[j, lo:hi], unused)
                target = torch.from_numpy(item[1][lo:hi])
                out.append((k, -F.cross_entropy(logits, target, reduction="sum")))
        out.sort(key=lambda pair: pair[0])
        return torch.stack([value for _, value in out])

    items = [(side(pair["chosen"]), side(pair["rejected"])) for pair in pairs]
    opt = torch.optim.AdamW(model.parameters(), lr=d["lr"], betas=(0.9, 0.95), weight_decay=0.0)
    beta, B = d["beta"], d["batch"]
    first_step = len(curve)
    accuracy = []
    for step in range(d["steps"]):
        picks = rng.integers(len(items), size=B)
        chosen = [items[i][0] for i in picks]
        rejected = [items[i][1] for i in picks]
        with torch.no_grad():
            ref_c, ref_r = logps(reference, chosen), logps(reference, rejected)
        pol_c, pol_r = logps(model, chosen), logps(model, rejected)
        margin = beta * ((pol_c - ref_c) - (pol_r - ref_r))
        loss = -F.logsigmoid(margin).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        accuracy.append(float((margin > 0).float().mean()))
        curve.append({"step": first_step + step + 1, "phase": "dpo", "loss": round(loss.item(), 5)})
        if step % 10 == 0 or step == d["steps"] - 1:
            print(f"tiny-model: dpo step {step + 1}/{d['steps']} loss {loss.item():.4f} ({time.time() - started:.0f}s)", flush=True)
    tail = max(1, len(accuracy) // 5)
    return {"pairs": len(pairs), "steps": d["steps"], "beta": beta, "final_reward_accuracy": round(float(np.mean(accuracy[-tail:])), 4)}


def parse_options(argv):
    """Optional KEY=VALUE arguments after the six positional ones."""
    options = {}
    for arg in argv:
        key, _, value = arg.partition("=")
        if not value:
            sys.exit(f"tiny-model: argument {arg!r} is not KEY=VALUE (state-in, state-out, preferences, curve)")
        options[key] = value
    return options


def main():
    config_path, corpus_path, vocab_path, template_path, out_gguf, out_stats = sys.argv[1:7]
    options = parse_options(sys.argv[7:])
    started = time.time()
    config = json.load(open(config_path))
    m, t = config["model"], config["train"]
    torch.manual_seed(t["seed"])
    torch.set_num_threads(t["threads"])
    torch.use_deterministic_algorithms(True)
    rng = np.random.default_rng(t["seed"])

    lines = [json.loads(line) for line in open(corpus_path)]
    train = [line for line in lines if line["split"] == "train"]
    heldout = [line for line in lines if line["split"] == "heldout"]
    vocab = read_vocab(vocab_path)
    n_vocab = len(vocab["tokens"])
    state_in = torch.load(options["state-in"]) if "state-in" in options else None
    # Training on top of a model keeps its vocabulary: ids it never saw stay in the shared class.
    used = state_in["used"] if state_in else sorted({i for line in train for i in line["ids"]})
    U = len(used)
    to_compact = np.full(n_vocab, U, dtype=np.int64)
    to_compact[np.array(used)] = np.arange(U)

    P = state_in["prefix_length"] if state_in else shared_prefix(train)
    first = state_in["prefix"] if state_in else next(line for line in train if "#catalog" not in line["record_id"])["ids"][:P]
    prefix = torch.tensor(to_compact[np.array(first[:P])])[None]
    shares = lambda line: line["ids"][:P] == first[:P]

    def tail(line, start=P):
        """The episode after the prefix: inputs, targets (compact ids) and the loss mask, aligned."""
        ids = np.array(line["ids"])
        mask = np.zeros(len(ids), dtype=bool)
        for s, e in line["loss"]:
            mask[s:e] = True  # targets at positions s..e-1 are predicted from the position before
        return to_compact[ids[start:-1]], to_compact[ids[start + 1:]], mask[start + 1:]

    start_token = vocab["tokens"].index("<|im_start|>")

    def request_start(ids):
        """Where the first user turn begins: the second <|im_start|>."""
        return [k for k, i in enumerate(ids) if i == start_token][1]

    # A line under a changed catalog has a system turn of another length: its tail starts as far into its request as the prefix reaches into the others'.
    into_request = P - request_start(first) if first.count(start_token) > 1 else 0

    def whole(line):
        ids = np.array(line["ids"])
        mask = np.zeros(len(ids), dtype=bool)
        for s, e in line["loss"]:
            mask[s:e] = True
        return to_compact[ids[:-1]], to_compact[ids[1:]], mask[1:]

    tails = [tail(line) for line in train if shares(line)]
    odd = [whole(line) for line in train if not shares(line)]
    odd_tails = [tail(line, request_start(line["ids"]) + into_request) for line in train if not shares(line) and into_request > 0]
    held = [tail(line) for line in heldout if shares(line)]

    model = TinyQwen2(m, U + 1)
    parity = check_against_transformers(model, m)
    if state_in:
        model.load_state_dict(state_in["weights"])
    print(f"tiny-model: {len(train)} training lines ({len(odd)} under a changed catalog), {U} token ids used, shared prefix {P} tokens, forward matches transformers' Qwen2 (max diff {parity:.1e}) ({time.time() - started:.0f}s)", flush=True)
    unused = n_vocab - U

    def pad(batch):
        S = max(len(b[0]) for b in batch)
        ids = torch.zeros(len(batch), S, dtype=torch.long)
        tgt = torch.zeros(len(batch), S, dtype=torch.long)
        msk = torch.zeros(len(batch), S, dtype=torch.bool)
        for j, (x, y, mk) in enumerate(batch):
            ids[j, : len(x)] = torch.from_numpy(x)
            tgt[j, : len(y)] = torch.from_numpy(y)
            msk[j, : len(mk)] = torch.from_numpy(mk)
        return ids, tgt, msk, S

    def batch_loss(batch, with_prefix=True):
        ids, tgt, msk, S = pad(batch)
        past = model(prefix, torch.arange(P))[1] if with_prefix else None
        hidden, _ = model(ids, torch.arange(P, P + S), past)
        logits = model.logits(hidden[msk], unused)
        return F.cross_entropy(logits, tgt[msk])

    def whole_loss(item):
        ids, tgt, msk, S = pad([item])
        hidden, _ = model(ids, torch.arange(S))
        return F.cross_entropy(model.logits(hidden[msk], unused), tgt[msk])

    eos_compact = to_compact[vocab["tokens"].index(EOS_TEXT)]

    def window(item, width):
        """A short sample: the request (the first user turn), then one trained turn with the `width` tokens before it, at positions after the prefix.

        The conversation between is cut: what a turn copies is in the request or in the results just before it."""
        x, y, mk = item
        spans = np.flatnonzero(np.diff(np.concatenate([[0], mk.astype(np.int8), [0]])))
        starts, ends = spans[0::2], spans[1::2]
        k = int(rng.integers(len(starts)))
        request = int(np.flatnonzero(x == eos_compact)[0]) + 1 if (x == eos_compact).any() else 0
        lo = max(request, starts[k] - width)
        keep = np.concatenate([np.arange(request), np.arange(lo, ends[k])])
        return x[keep], y[keep], mk[keep]

    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    rest = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": t["weight_decay"]}, {"params": rest, "weight_decay": 0.0}],
                            lr=t["lr"], betas=(0.9, 0.95))
    windows = t.get("windows", {"steps": 0})
    steps, B = t["steps"], t["batch_episodes"]
    recall = t.get("recall", {"steps": 0})
    total = recall["steps"] + windows["steps"] + steps

    def lr_at(step):
        # The copying phase has its own constant rate: its plateau is left sooner at a rate the later phases would find too low.
        if step < recall["steps"]:
            return recall.get("lr", t["lr"]) * min(1.0, (step + 1) / t["warmup_steps"])
        step -= recall["steps"]
        if step < t["warmup_steps"]:
            return t["lr"] * (step + 1) / t["warmup_steps"]
        progress = (step - t["warmup_steps"]) / max(1, total - recall["steps"] - t["warmup_steps"])
        return t["lr"] * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))

    curve = []
    every = t.get("heldout_every", 0)

    def heldout_loss():
        with torch.no_grad():
            return float(np.mean([batch_loss(held[i:i + B]).item() for i in range(0, len(held), B)]))

    specials = {to_compact[vocab["tokens"].index(text)] for text in ("<|im_start|>", EOS_TEXT)} | {U}
    plain_ids = np.array([c for c in range(U) if c not in specials])

    digit_ids = np.array([to_compact[vocab["tokens"].index(str(k))] for k in range(10)])
    digit_ids = digit_ids[digit_ids < U]

    def recall_sample(length):
        """Copying on random tokens: a random span, filler, then the same span again, trained on the repeat.

        A tool call copies an issue number or a login from the request or a result; a model learns that lookup (an
        induction head: find where the current token was, write what followed it) only after a plateau, and only when
        nothing but the earlier text predicts what comes next. Every repeated token is a target, so each sample teaches it
        many times. Half the spans are mostly digits: with ten symbols one matching token is ambiguous, so the model must
        match the run so far, as it must to copy 5368 from "#5368"."""
        n = int(rng.integers(6, max(7, length // 2 - 8)))
        if len(digit_ids) and rng.random() < 0.5:
            span = np.where(rng.random(n) < 0.8, rng.choice(digit_ids, size=n), rng.choice(plain_ids, size=n))
        else:
            span = rng.choice(plain_ids, size=n)
        before = rng.choice(plain_ids, size=int(rng.integers(0, 8)))
        between = rng.choice(plain_ids, size=int(rng.integers(0, 8)))
        tokens = np.concatenate([before, span, between, span]).astype(np.int64)
        x, y = tokens[:-1], tokens[1:]
        mk = np.zeros(len(y), dtype=bool)
        mk[len(tokens) - n:] = True  # from the repeat's second token: its first follows nothing that predicts it
        return x, y, mk

    order = []
    losses = []
    for step in range(total):
        for group in opt.param_groups:
            group["lr"] = lr_at(step)
        if step < recall["steps"]:
            loss = batch_loss([recall_sample(recall["length"]) for _ in range(recall["batch"])], with_prefix=False)
            phase = "recall"
        elif step - recall["steps"] < windows["steps"]:
            picks = rng.integers(len(tails) + len(odd_tails), size=windows["batch"])
            # The last windows attend to the system turn, so the model learns to read past the catalog before whole tails cost it more.
            with_prefix = step - recall["steps"] >= windows["steps"] - windows.get("prefix_steps", 0)
            sample = lambda i: tails[i] if i < len(tails) else odd_tails[i - len(tails)]
            loss = batch_loss([window(sample(i), windows["width"]) for i in picks], with_prefix=with_prefix)
            if recall.get("keep", 0):
                # Copying samples ride along, so the lookup the first phase found is not unlearned before the tool calls use it.
                loss = loss + batch_loss([recall_sample(recall["length"]) for _ in range(recall["keep"])], with_prefix=False)
            phase = "windows+prefix" if with_prefix else "windows"
        else:
            if len(order) < B:
                order.extend(rng.permutation(len(tails)).tolist())
            batch = [tails[i] for i in order[:B]]
            del order[:B]
            tail_step = step - recall["steps"] - windows["steps"]
            with_prefix = tail_step >= t["steps_without_prefix"]
            loss = batch_loss(batch, with_prefix=with_prefix)
            if odd and with_prefix and tail_step % max(1, len(tails) // max(1, len(odd))) == 0:
                loss = loss + whole_loss(odd[int(rng.integers(len(odd)))]) / B
            phase = "prefix" if with_prefix else "tails"
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        point = {"step": step + 1, "phase": phase, "loss": round(loss.item(), 5)}
        if every and held and ((step + 1) % every == 0 or step == total - 1):
            point["heldout_loss"] = round(heldout_loss(), 5)
        curve.append(point)
        if step % 25 == 0 or step == total - 1:
            print(f"tiny-model: step {step + 1}/{total} ({phase}) loss {loss.item():.4f} ({time.time() - started:.0f}s)", flush=True)

    preference_stats = None
    if "preferences" in options:
        preference_stats = train_preferences(model, options["preferences"], t["dpo"], to_compact, prefix, P, unused, rng, curve, started)

    held_loss = heldout_loss() if held else None
    template = open(template_path).read()
    eos = write_gguf(out_gguf, model, m, used, vocab, template)
    if "state-out" in options:
        torch.save({"weights": model.state_dict(), "used": used, "prefix_length": P, "prefix": list(first[:P])}, options["state-out"])
    stats = {
        "used_token_ids": U,
        "shared_prefix_tokens": P,
        "train_episodes": len(train),
        "heldout_episodes": len(heldout),
        "steps": len(losses),
        "final_loss": round(float(np.mean(losses[-10:])), 5) if losses else None,
        "heldout_loss": round(held_loss, 5) if held_loss is not None else None,
        "transformers_parity_max_abs_diff": parity,
        "eos_token_id": eos,
        "train_seconds": round(time.time() - started, 1),
    }
    if windows["steps"] or odd or recall["steps"]:
        stats["recall_steps"] = recall["steps"]
        stats["windows_steps"] = windows["steps"]
        stats["changed_catalog_lines"] = len(odd)
    if preference_stats:
        stats["preferences"] = preference_stats
    json.dump(stats, open(out_stats, "w"), indent=2)
    if "curve" in options:
        with open(options["curve"], "w") as out:
            for point in curve:
                out.write(json.dumps(point) + "\n")
    dpo_note = f", then {preference_stats['steps']} DPO steps (reward accuracy {preference_stats['final_reward_accuracy']})" if preference_stats else ""
    print(f"tiny-model: trained {len(losses)} steps, final loss {stats['final_loss'] if losses else '-'}{dpo_note}, held-out loss {stats['heldout_loss']}", flush=True)


if __name__ == "__main__":
    main()
