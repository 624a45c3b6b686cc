"""memplan from Python: each command of the CLI as a function that returns what its --json prints, as dicts.

    import memplan
    r = memplan.estimate(model="llama-3.1-8b", batch_size=4, seq_len=2048, precision="bf16", gpu="h100-sxm")
    r["fits"], r["peak_reserved_mib"]

    cfg = transformers.AutoConfig.from_pretrained("Qwen/Qwen2.5-7B").to_dict()
    memplan.fit(model=cfg, gpu="rtx-4090", batch_size=2, seq_len=1024)["remedies"]

Keyword arguments are the command's flags with dashes as underscores (batch_size=4 is --batch-size 4): True
gives a bare flag, False and None leave it out, a list of integers is comma-separated (grad_checkpointing=[0, 2]),
another list repeats the flag, a dict gives repeated key=value flags (allow={"precision": ["bf16", "fp16"]}).
Distributed runs take the CLI's flags too: estimate(model, gpus=8, strategy="fsdp2", reshard_after_forward=False,
mp_param_dtype="bf16", mp_reduce_dtype="fp32", tp=2, sequence_parallel=True, rank=0, bucket_cap_mb=25,
gradient_as_bucket_view=True, static_graph=True, offload="params"); reshard_after_forward takes True, False or a
group size K (it is a value, not a bare flag), and the answer carries a "distributed" dict (the rank's figures).
`model` is a zoo name, a Hugging Face id of a zoo entry, a path, or a dict (a config.json's content or a native
graph, models/NATIVE-FORMAT.md). Bad input raises ValueError with the CLI's one-line message.

The functions run the memplan binary's own code in this process (_memplan, built from cli/run_cli.h): the same
parsing, the same numbers, nothing printed.
"""
import json
import os
from collections import namedtuple

from . import _memplan

__all__ = ["estimate", "fit", "plan", "serve", "dynamic", "explain_oom", "validate", "models", "command",
           "CommandResult", "MemplanError"]

# Exit codes of the command line (cli/run_cli.h).
_EXIT_OK, _EXIT_BAD_INPUT, _EXIT_INTERNAL, _EXIT_CASES_REFUSED = 0, 2, 3, 4

CommandResult = namedtuple("CommandResult", "exit_code stdout stderr")


class MemplanError(RuntimeError):
    """An internal error of memplan (the CLI's exit code 3): a bug, please report it with the arguments."""


def command(*args, stdin=""):
    """Runs `memplan ARGS...` in process; returns CommandResult(exit_code, stdout, stderr) as text.

    For the text reports: print(memplan.command("fit", "--model", "gpt2", "--gpu", "rtx-4090").stdout)
    """
    code, out, err = _memplan.run([str(a) for a in args], stdin)
    return CommandResult(code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


# Options whose value may be a bool that must be passed as text (FSDP2's reshard_after_forward: true | false | K).
_VALUE_FLAGS = ("reshard_after_forward",)


def _flag_args(options):
    """Keyword arguments -> (argv tail, stdin text)."""
    argv, stdin = [], ""
    for key, value in options.items():
        if key in ("json", "quiet"):
            raise TypeError(f"{key}= is not an option here: the functions always return the --json answer")
        flag = "--" + key.replace("_", "-")
        if key in _VALUE_FLAGS and isinstance(value, bool):
            argv += [flag, "true" if value else "false"]  # False is a setting here, not an absent flag
            continue
        if value is None or value is False:
            continue
        if value is True:
            argv.append(flag)
        elif key == "model" and isinstance(value, dict):
            argv += [flag, "-"]
            stdin = json.dumps(value)
        elif isinstance(value, dict):
            for k, v in value.items():
                v = ",".join(str(x) for x in v) if isinstance(v, (list, tuple)) else str(v)
                argv += [flag, f"{k}={v}"]
        elif isinstance(value, (list, tuple)):
            if all(isinstance(x, int) and not isinstance(x, bool) for x in value):
                argv += [flag, ",".join(str(x) for x in value)]
            else:
                for x in value:
                    argv += [flag, str(x)]
        else:
            argv += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    return argv, stdin


def _run(argv, stdin="", refused_ok=False):
    r = command(*argv, stdin=stdin)
    if r.exit_code == _EXIT_BAD_INPUT:
        raise ValueError(r.stderr.strip())
    if r.exit_code not in ((_EXIT_OK, _EXIT_CASES_REFUSED) if refused_ok else (_EXIT_OK,)):
        raise MemplanError(r.stderr.strip() or f"memplan exited with {r.exit_code}")
    return json.loads(r.stdout)


def _command(name, model, options):
    argv, stdin = _flag_args({"model": model, **options})
    return _run([name] + argv + ["--json"], stdin)


def estimate(model, **options):
    """`memplan estimate`: the ledger of one training step (or an inference run), peak, reserved, fit."""
    return _command("estimate", model, options)


def fit(model, **options):
    """`memplan fit`: the verdict and, when it does not fit (or advise=True), the ordered remedies."""
    return _command("fit", model, options)


def plan(model, **options):
    """`memplan plan`: parallelism / batch / precision / checkpointing search on gpus= GPUs of one kind."""
    return _command("plan", model, options)


def serve(model, **options):
    """`memplan serve`: vLLM-style serving capacity (KV blocks, concurrent sequences, max context)."""
    return _command("serve", model, options)


def dynamic(model, **options):
    """`memplan dynamic`: steps of varying sequence length (seq_lens=[...] or seq_len_sample="MIN:MAX:STEPS")."""
    return _command("dynamic", model, options)


def explain_oom(message):
    """`memplan explain-oom`: what a PyTorch CUDA out-of-memory message means, whether its numbers agree
    (consistent, inconsistencies) and what to change."""
    return _run(["explain-oom", "--json", "-"], str(message))


def validate(cases, **options):
    """`memplan validate`: predicted vs measured for each case (data/validation/CASE-FORMAT.md).

    `cases` is a path to a JSONL file or a list of case dicts. A case memplan cannot model is in the result with
    predicted["error"] and counted in summary["refused"]; it does not raise.
    """
    argv, _ = _flag_args(options)
    if isinstance(cases, (str, os.PathLike)):
        return _run(["validate", os.fspath(cases)] + argv + ["--json"], refused_ok=True)
    text = "".join(json.dumps(c) + "\n" for c in cases)
    return _run(["validate", "-"] + argv + ["--json"], text, refused_ok=True)


def models():
    """`memplan models`: the bundled zoo, one dict per entry."""
    return _run(["models", "--json"])
