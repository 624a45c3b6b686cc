#!/usr/bin/env bash
# The thirty-second session's first call: the installed (transformers 5.17) modeling files of the families this
# session may add next, so their builders mirror the version the harness runs rather than the code index's older
# copies, then sets 45 and 46 as runs/set45_46_run.sh measures them.
#   OUT=dir bash calibrate/runs/sources_and_set45_46_run.sh SHA45 SHA46   ($OUT/sources.tgz + set45_46_run.sh's files)
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/src"
python3 - "$OUT/src" <<'PY'
import importlib, inspect, sys, transformers
out = sys.argv[1]
open(f"{out}/VERSION", "w").write(transformers.__version__ + "\n")
for m in ["codegen", "mpt", "biogpt", "xlm_roberta_xl", "data2vec.modeling_data2vec_text", "xlm_roberta",
          "qwen2_audio", "idefics2", "llava_next_video", "zamba2", "recurrent_gemma", "rwkv", "detr", "gptj",
          "longformer", "big_bird", "xlnet", "mobilebert", "squeezebert", "funnel", "blip_2", "pixtral", "led",
          "pegasus_x", "longt5", "switch_transformers", "persimmon", "fuyu", "nllb_moe", "rembert", "convbert",
          "layoutlmv3", "xmod", "nystromformer", "luke", "chameleon", "aya_vision", "granite_speech", "deberta",
          "audio_spectrogram_transformer", "mobilevit", "yolos", "efficientnet", "regnet", "levit", "vit_mae",
          "videomae", "data2vec.modeling_data2vec_audio", "speecht5", "blip", "instructblip", "kosmos2", "owlvit",
          "git", "sew", "unispeech", "wav2vec2_conformer", "clap", "mask2former", "dpt", "upernet", "bert",
          "roberta", "gpt_neox", "opt", "bloom", "falcon", "gpt_bigcode", "bart", "t5"]:
    mod = m if "." in m else f"{m}.modeling_{m}"
    try:
        src = inspect.getsource(importlib.import_module(f"transformers.models.{mod}"))
    except Exception as e:
        src = f"# import failed: {e!r}\n"
    open(f"{out}/{mod.split('.')[-1]}.py", "w").write(src)
PY
tar czf "$OUT/sources.tgz" -C "$OUT" src && rm -rf "$OUT/src"
bash "$here/runs/set45_46_run.sh" "$@"
