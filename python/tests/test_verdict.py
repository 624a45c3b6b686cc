#!/usr/bin/env python3
"""The verdict's keys in the Python module (issue 17): every answer with a budget keeps `fits` a bool and adds
`margin_bytes` (budget - predicted device total), `band_bytes` (the error band on the margin's side) and
`verdict` ("fits" | "does_not_fit" | "borderline"). Expected values: the binary's own --json for the same
arguments, and the README's GPT-2 example (16008 MiB on the device). Run by ctest (python/CMakeLists.txt).
"""
import json
import os
import subprocess
import unittest

import memplan

BIN = os.environ.get("MEMPLAN_BIN", "memplan")
SRC = os.environ.get("MEMPLAN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
MIB, GIB = 1 << 20, 1 << 30
VERDICTS = {"fits", "does_not_fit", "borderline"}


def cli_json(*args):
    p = subprocess.run([BIN, *args, "--json"], capture_output=True, text=True)
    return json.loads(p.stdout)


class VerdictKeys(unittest.TestCase):
    def check_keys(self, d):
        self.assertIsInstance(d["fits"], bool)
        self.assertIsInstance(d["margin_bytes"], int)
        self.assertIsInstance(d["band_bytes"], int)
        self.assertGreater(d["band_bytes"], 0)
        self.assertIn(d["verdict"], VERDICTS)

    def test_estimate_fit_plan_serve(self):
        e = memplan.estimate(model="gpt2", batch_size=2, seq_len=128, gpu="h200")
        self.check_keys(e)
        self.assertEqual(e["verdict"], "fits")
        self.assertEqual(e, cli_json("estimate", "--model", "gpt2", "--batch-size", "2", "--seq-len", "128", "--gpu", "h200"))
        f = memplan.fit(model="llama-2-7b", precision="bf16", gpu="rtx-4090")
        self.check_keys(f)
        self.assertEqual(f["verdict"], "does_not_fit")
        for c in memplan.plan(model="gpt2", gpu="h200", gpus=2, top=2, seq_len=256)["top"]:
            self.check_keys(c)
        self.check_keys(memplan.serve(model="llama-3.1-8b", gpu="h200"))

    def test_borderline_names_what_buys_safety(self):
        # GPT-2 fp32 b8 x 1024 needs 16008 MiB on the device; 15.8 GiB leaves +171.2 MiB, inside the band.
        f = memplan.fit(model="gpt2", batch_size=8, seq_len=1024, precision="fp32", gpu_memory_gib=15.8)
        self.check_keys(f)
        self.assertEqual(f["verdict"], "borderline")
        self.assertTrue(f["fits"])
        self.assertEqual(f["margin_bytes"], int(15.8 * GIB) - 16008 * MIB)
        self.assertLessEqual(f["margin_bytes"], f["band_bytes"])
        self.assertEqual([s["flags"] for s in f["safety"]["steps"]][1], "--batch-size 7")
        self.assertAlmostEqual(f["safety"]["memory_fraction"], 0.948)

    def test_validate_capped_cases(self):
        path = os.path.join(SRC, "data", "validation", "h200-boundary.jsonl")
        for row in memplan.validate(path)["cases"]:
            p = row["predicted"]
            if "error" in p or "fits" not in p:
                continue
            self.check_keys(p)
            measured_oom = row.get("measured", {}).get("oom")
            if measured_oom is not None and p["verdict"] != "borderline":
                self.assertEqual(p["verdict"] == "fits", not measured_oom, row["id"])


if __name__ == "__main__":
    unittest.main()
