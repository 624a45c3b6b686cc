#!/usr/bin/env python3
"""Writes the predictions of a held-out input, made before it is measured, as data/validation/predictions/*.json:
memplan validate --json's `predicted` per case, the input's sha256 (the device scripts check the input they measure
against it) and a note. Commit the file with the tree that made it: that commit is the one the note names.
Usage (repo root, after a Release build): python3 calibrate/write_predictions.py INPUT.jsonl OUT.json "NOTE" [MEMPLAN]"""
import hashlib
import json
import subprocess
import sys


def main():
    inp, out, note = sys.argv[1:4]
    memplan = sys.argv[4] if len(sys.argv) > 4 else "build/cli/memplan"
    r = subprocess.run([memplan, "validate", inp, "--json"], capture_output=True, text=True)
    if r.returncode not in (0, 4):
        sys.exit("memplan validate failed (%d): %s" % (r.returncode, r.stderr.strip()))
    cases = json.loads(r.stdout)["cases"]
    refused = [c["id"] for c in cases if "error" in c["predicted"]]
    if refused:
        sys.exit("refused: %s" % ", ".join(refused))
    doc = {"commit": "the commit that adds this file (its tree built Release: build/cli/memplan)", "input": inp,
           "input_sha256": hashlib.sha256(open(inp, "rb").read()).hexdigest(), "note": note,
           "cases": [{"id": c["id"], "predicted": c["predicted"]} for c in cases]}
    with open(out, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    print("wrote %s: %d cases" % (out, len(cases)))


if __name__ == "__main__":
    main()
