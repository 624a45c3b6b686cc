#!/usr/bin/env bash
# Twenty-second session's first call: family set 28, held out (cases/families28-input.jsonl, predicted in
# predictions/families28-holdout.json before this call), and its tuning row (cases/families28-tuning.jsonl, a
# tied head in modules_to_save, refused by memplan today), through harness.py.
#   OUT=dir bash calibrate/runs/families31_run.sh SHA_FAMILIES28
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
here=$(cd "$(dirname "$0")/.." && pwd)
R=$OUT/m; mkdir -p "$R"
(cd "$here"
 echo "${1:-} cases/families28-input.jsonl" | sha256sum -c - || echo "INPUT CHANGED SINCE THE PREDICTIONS"
 timeout ${HOLD_S:-300} python3 harness.py cases/families28-input.jsonl --out "$R/f28.jsonl" \
   --env "$R/env-f28.json" --jobs 8 --mem-budget-gib 120 --timeout $(( ${HOLD_S:-300} - 10 )) 2>&1 |
   grep -v "^\[transformers\]" > "$R/f28.log"; grep -E "summary| ERROR | OOM " "$R/f28.log" | cut -c1-160 | tail -20
 timeout 150 python3 harness.py cases/families28-tuning.jsonl --out "$R/f28t.jsonl" --env "$R/env-f28t.json" \
   --jobs 1 --timeout 140 2>&1 | grep -v "^\[transformers\]" > "$R/f28t.log"
 grep -E "summary| ERROR | OOM " "$R/f28t.log" | cut -c1-160 | tail -5
 python3 - <<'PY' > "$R/tied-save.txt" 2>&1
# What peft 0.21 makes of modules_to_save=["lm_head"] on a tied model: which tensors exist, which share storage.
import torch, transformers, peft
cfg = transformers.AutoConfig.for_model("qwen3", hidden_size=256, intermediate_size=512, num_hidden_layers=1,
    num_attention_heads=4, num_key_value_heads=2, head_dim=64, vocab_size=4096, tie_word_embeddings=True)
m = transformers.AutoModelForCausalLM.from_config(cfg).to(torch.bfloat16).cuda()
print("tied before:", m.lm_head.weight.data_ptr() == m.model.embed_tokens.weight.data_ptr())
a0 = torch.cuda.memory_allocated()
pm = peft.get_peft_model(m, peft.LoraConfig(r=4, target_modules=["q_proj"], modules_to_save=["lm_head"]))
print("allocated by get_peft_model:", torch.cuda.memory_allocated() - a0)
ptrs = {}
for n, p in pm.named_parameters(remove_duplicate=False):
    if "lm_head" in n or "embed_tokens" in n:
        print(n, tuple(p.shape), p.dtype, p.requires_grad, p.data_ptr() == m.model.embed_tokens.weight.data_ptr())
print(pm.base_model.model.lm_head)
PY
 cat "$R/tied-save.txt" | head -20
)
tar czf "$OUT/families31.tgz" -C "$R" .
ls -la "$OUT"
