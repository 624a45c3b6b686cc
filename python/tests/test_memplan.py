#!/usr/bin/env python3
"""Tests of the memplan Python package (python/memplan), run by ctest (python/CMakeLists.txt) with
PYTHONPATH at the built package, MEMPLAN_BIN at the memplan binary and MEMPLAN_SOURCE_DIR at the repository.

Expected values: the binary's own --json output for the same arguments (the package must be that code path),
the zoo's files and measured cases in the repository, and figures derived by hand in comments.
Standard library only (unittest).
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import memplan

BIN = os.environ.get("MEMPLAN_BIN", "memplan")
SRC = os.environ.get("MEMPLAN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def cli(*args, stdin=""):
    """The memplan binary itself: (exit code, stdout, stderr)."""
    p = subprocess.run([BIN, *args], input=stdin, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def zoo_config(name):
    with open(os.path.join(SRC, "models", "zoo", name + ".json")) as f:
        return json.load(f)


# The message of the article our users read: allocated above reserved, more free than requested.
ARTICLE = ("Tried to allocate 512.00 MiB (GPU 0; 23.69 GiB total capacity; 19.82 GiB already allocated; "
           "3.30 GiB free; 18.42 GiB reserved in total by PyTorch)")


class SameAsTheCli(unittest.TestCase):
    """Each function returns exactly what the command's --json prints."""

    def test_every_function_against_the_binary(self):
        rows = [
            (memplan.estimate, dict(model="gpt2", batch_size=2, seq_len=256, gpu="h200"),
             ["estimate", "--model", "gpt2", "--batch-size", "2", "--seq-len", "256", "--gpu", "h200"]),
            (memplan.estimate, dict(model="gpt2", mode="inference", batch_size=2, seq_len=128, generate_tokens=4),
             ["estimate", "--model", "gpt2", "--mode", "inference", "--batch-size", "2", "--seq-len", "128",
              "--generate-tokens", "4"]),
            (memplan.fit, dict(model="llama-2-7b", precision="bf16", seq_len=2048, gpu="rtx-4090"),
             ["fit", "--model", "llama-2-7b", "--precision", "bf16", "--seq-len", "2048", "--gpu", "rtx-4090"]),
            (memplan.plan, dict(model="gpt2", gpu="h200", gpus=2, top=2, seq_len=512),
             ["plan", "--model", "gpt2", "--gpu", "h200", "--gpus", "2", "--top", "2", "--seq-len", "512"]),
            (memplan.serve, dict(model="llama-3.1-8b", gpu="h200", max_model_len=8192),
             ["serve", "--model", "llama-3.1-8b", "--gpu", "h200", "--max-model-len", "8192"]),
            (memplan.dynamic, dict(model="gpt2", batch_size=2, seq_lens=[128, 256, 200]),
             ["dynamic", "--model", "gpt2", "--batch-size", "2", "--seq-lens", "128,256,200"]),
        ]
        for fn, kwargs, argv in rows:
            with self.subTest(argv=" ".join(argv)):
                code, out, err = cli(*argv, "--json")
                self.assertEqual(code, 0, err)
                self.assertEqual(fn(**kwargs), json.loads(out))

    def test_explain_oom_and_models(self):
        code, out, _ = cli("explain-oom", "--json", ARTICLE)
        self.assertEqual(code, 0)
        self.assertEqual(memplan.explain_oom(ARTICLE), json.loads(out))
        code, out, _ = cli("models", "--json")
        self.assertEqual(memplan.models(), json.loads(out))
        self.assertIn("gpt2", [m["name"] for m in memplan.models()])

    def test_bad_input_is_a_value_error_with_the_cli_line(self):
        rows = [
            (dict(model="gtp2"), ["--model", "gtp2"]),                       # unknown model
            (dict(model="gpt2", precision="fp12"), ["--model", "gpt2", "--precision", "fp12"]),
            (dict(model="gpt2", batch_size=0), ["--model", "gpt2", "--batch-size", "0"]),
            (dict(model="gpt2", batch_sise=2), ["--model", "gpt2", "--batch-sise", "2"]),  # a typo'd keyword
            (dict(model={"model_type": "llama", "hidden_size": -64}), None),  # a dict with a bad value
        ]
        for kwargs, argv in rows:
            with self.subTest(kwargs=kwargs):
                with self.assertRaises(ValueError) as ctx:
                    memplan.estimate(**kwargs)
                msg = str(ctx.exception)
                self.assertTrue(msg.startswith("memplan: "), msg)
                self.assertNotIn("\n", msg)
                if argv:
                    code, _, err = cli("estimate", *argv, "--json")
                    self.assertEqual(code, 2)
                    self.assertEqual(msg, err.strip())
                else:
                    self.assertIn("hidden_size", msg)
        with self.assertRaises(ValueError):
            memplan.explain_oom("this is not an OOM message")
        with self.assertRaises(TypeError):
            memplan.estimate(model="gpt2", json=True)


class Models(unittest.TestCase):
    """model= as a zoo name, a hub id, a path, a directory or a dict."""

    def test_every_way_of_naming_gpt2_gives_its_numbers(self):
        want = memplan.estimate(model="gpt2", batch_size=1, seq_len=128)
        cfg = zoo_config("gpt2")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "config.json")
            with open(path, "w") as f:
                json.dump(cfg, f)
            # What transformers' AutoConfig.from_pretrained(...).to_dict() adds to a config.json.
            to_dict = dict(cfg, _name_or_path="openai-community/gpt2", transformers_version="5.17.0",
                           architectures=["GPT2LMHeadModel"], dtype="float32", return_dict=True,
                           output_hidden_states=False, id2label={"0": "LABEL_0"}, label2id={"LABEL_0": 0},
                           problem_type=None, tokenizer_class=None, prefix=None, chunk_size_feed_forward=0)
            for model, name in [("openai-community/gpt2", "gpt2"), ("OpenAI-Community/GPT2", "gpt2"),
                                (path, path), (d, d), (cfg, "stdin"),
                                (to_dict, "openai-community/gpt2")]:
                with self.subTest(model=model if isinstance(model, str) else "dict"):
                    got = memplan.estimate(model=model, batch_size=1, seq_len=128)
                    self.assertEqual(got["model"], name)
                    self.assertEqual(got["params"], want["params"])
                    self.assertEqual(got["peak_allocated_bytes"], want["peak_allocated_bytes"])

    def test_native_graph_dict(self):
        path = os.path.join(SRC, "models", "examples", "mlp-classifier.json")
        with open(path) as f:
            doc = json.load(f)
        self.assertEqual(memplan.estimate(model=doc, batch_size=8)["params"],
                         memplan.estimate(model=path, batch_size=8)["params"])

    def test_unknown_name_lists_the_nearest(self):
        with self.assertRaises(ValueError) as ctx:
            memplan.estimate(model="acme/gtp2")
        msg = str(ctx.exception)
        self.assertIn("nearest zoo names: gpt2", msg)
        self.assertIn("memplan models", msg)
        self.assertIn("NATIVE-FORMAT.md", msg)
        self.assertIn("huggingface-cli download acme/gtp2 config.json", msg)


class Answers(unittest.TestCase):

    def test_fit_answers_with_remedies(self):
        # The README's default job: Llama-2-7B bf16 AdamW on a 24 GB card needs ~67 GiB (weights, gradients,
        # two Adam moments, the foreach temporary: 5 x 12.55 GiB), so it does not fit and remedies follow.
        r = memplan.fit(model="llama-2-7b", precision="bf16", batch_size=1, seq_len=2048, optimizer="adamw",
                        gpu="rtx-4090")
        self.assertFalse(r["fits"])
        self.assertGreater(len(r["remedies"]), 0)
        first = r["fits_after_remedy"]
        self.assertIsInstance(first, int)
        self.assertTrue(r["remedies"][first - 1]["fits"])
        self.assertFalse(any(x["fits"] for x in r["remedies"][:first - 1]))
        small = memplan.fit(model="gpt2", batch_size=1, seq_len=128, gpu="h200")
        self.assertTrue(small["fits"])
        self.assertEqual(small["remedies"], [])
        self.assertIsNone(small["fits_after_remedy"])

    def test_lists_become_flags(self):
        # grad_checkpointing=[0, 2] is --grad-checkpointing 0,2; allow= a dict of repeated key=value flags.
        r = memplan.estimate(model="gpt2", batch_size=1, seq_len=128, grad_checkpointing=[0, 2])
        self.assertEqual(r["config"]["checkpoint_layers"], [0, 2])
        p = memplan.plan(model="gpt2", gpu="h200", gpus=2, top=1, seq_len=256,
                         allow={"precision": ["bf16"], "dp": "ddp"})
        self.assertTrue(all(c["precision"] == "bf16" and c["data_parallel"] == "ddp" for c in p["top"]))

    def test_explain_oom_flags_the_article(self):
        r = memplan.explain_oom(ARTICLE)
        self.assertFalse(r["consistent"])
        self.assertEqual(r["kind"], "inconsistent")
        self.assertEqual(len(r["inconsistencies"]), 2)  # allocated > reserved; 3.30 GiB free > 512 MiB request
        self.assertNotIn("0 bytes short", json.dumps(r))

    def test_validate_goes_on(self):
        path = os.path.join(SRC, "data", "validation", "h200-public-cases.jsonl")
        with open(path) as f:
            good = json.loads(f.readline())
        typo = dict(good, id="typo", grad_acum_steps=2)
        bad = dict(good, id="bad", batch_size=0)
        r = memplan.validate([good, typo, bad])
        self.assertEqual([c["id"] for c in r["cases"]], [good["id"], "typo", "bad"])
        self.assertEqual(r["summary"]["refused"], 2)
        self.assertEqual(r["summary"]["predicted"], 1)
        self.assertIn("grad_acum_steps", r["cases"][1]["predicted"]["error"])
        self.assertIn("batch_size", r["cases"][2]["predicted"]["error"])
        # the measured figure comes back next to the prediction
        self.assertEqual(r["cases"][0]["measured"]["peak_allocated_mib"], good["measured"]["peak_allocated_mib"])
        whole = memplan.validate(path, only=good["id"])
        self.assertEqual(whole["summary"], {**whole["summary"], "cases": 1, "refused": 0})

    def test_command_gives_the_text(self):
        r = memplan.command("fit", "--model", "llama-2-7b", "--precision", "bf16", "--gpu", "rtx-4090")
        self.assertEqual(r.exit_code, 0)
        self.assertIn("Remedies in order", r.stdout)
        self.assertTrue(r.stdout.rstrip().splitlines()[-1].startswith("Verdict: DOES NOT FIT"))


class Distributed(unittest.TestCase):
    """gpus= / strategy= ... are the CLI's distributed flags; the answer is rank 0's (or rank=R's)."""

    def test_keywords_are_the_flags(self):
        tiny = ["--model", "tinyllama-1.1b", "--seq-len", "256"]
        rows = [
            (dict(gpus=8, strategy="fsdp2"), ["--gpus", "8", "--strategy", "fsdp2"]),
            # reshard_after_forward is a value: False is passed as "false", not dropped as a bare flag would be
            (dict(gpus=8, strategy="fsdp2", reshard_after_forward=False, mp_param_dtype="bf16", mp_reduce_dtype="fp32"),
             ["--gpus", "8", "--strategy", "fsdp2", "--reshard-after-forward", "false", "--mp-param-dtype", "bf16",
              "--mp-reduce-dtype", "fp32"]),
            (dict(gpus=8, strategy="fsdp2", reshard_after_forward=4, rank=5),
             ["--gpus", "8", "--strategy", "fsdp2", "--reshard-after-forward", "4", "--rank", "5"]),
            (dict(gpus=4, strategy="ddp", bucket_cap_mb=1, gradient_as_bucket_view=True),
             ["--gpus", "4", "--strategy", "ddp", "--bucket-cap-mb", "1", "--gradient-as-bucket-view"]),
            (dict(gpus=4, tp=2, strategy="fsdp2", sequence_parallel=True),
             ["--gpus", "4", "--tp", "2", "--strategy", "fsdp2", "--sequence-parallel"]),
        ]
        for kwargs, argv in rows:
            with self.subTest(argv=" ".join(argv)):
                code, out, err = cli("estimate", *tiny, *argv, "--json")
                self.assertEqual(code, 0, err)
                r = memplan.estimate(model="tinyllama-1.1b", seq_len=256, **kwargs)
                self.assertEqual(r, json.loads(out))
                self.assertEqual(r["distributed"]["config"]["world_size"], kwargs["gpus"])
                self.assertEqual(r["distributed"]["rank"], kwargs.get("rank", 0))

    def test_bad_distributed_values_are_value_errors_naming_the_flag(self):
        rows = [
            (dict(gpus=8, strategy="fsdp"), "--strategy"),
            (dict(gpus=8), "--gpus"),                                     # no strategy
            (dict(gpus=6, tp=4, strategy="fsdp2"), "--gpus"),             # 6 % 4
            (dict(gpus=8, strategy="fsdp2", reshard_after_forward=3), "--reshard-after-forward"),  # 8 % 3
            (dict(gpus=8, strategy="fsdp2", rank=8), "--rank"),
            (dict(gpus=8, strategy="ddp", offload="optimizer"), "--offload"),
            (dict(gpus=8, strategy="fsdp2", pp=2), "--pp"),
        ]
        for kwargs, flag in rows:
            with self.subTest(kwargs=kwargs):
                with self.assertRaises(ValueError) as ctx:
                    memplan.estimate(model="tinyllama-1.1b", seq_len=256, **kwargs)
                self.assertIn(flag, str(ctx.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
