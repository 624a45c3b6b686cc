#!/usr/bin/env python3
"""Measures what SDPA's cuDNN backend allocates in backward for 16-bit causal attention, with and without
grouped KV heads (enable_gqa, as transformers calls it), over a grid of (B, H, Hkv, S, D). For each shape it
records the caching-allocator events of one backward (after a warm-up pass) and writes every allocation in
order (alloc "a" / free_completed "f", size, address): the workspaces are the blocks allocated and freed
within the backward, the gradients those returned.
Both layouts are measured: contiguous [B, H, S, D] and the HF models' transposed [B, S, H, D] storage.
Usage (GPU machine): python3 calibrate/sdpa_workspace.py OUT.json"""
import json
import sys


def main():
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0),
           "cudnn": torch.backends.cudnn.version(), "rows": []}
    grid = []
    for (h, hkv) in [(32, 32), (32, 8), (32, 4), (16, 16), (14, 2), (32, 16)]:
        for d in (64, 128):
            for s in (512, 1024, 2048):
                for b in (1, 2, 4):
                    grid.append((b, h, hkv, s, d))
    layouts = ("bhsd", "bshd")
    for (b, h, hkv, s, d), layout in [(g, lay) for g in grid for lay in layouts]:
        # bhsd: contiguous [B, H, S, D]; bshd: [B, S, H, D] storage seen through transpose(1, 2), as the HF
        # models hand q / k / v to SDPA (projection output viewed as heads).
        def make(heads):
            if layout == "bhsd":
                return torch.randn(b, heads, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            return torch.randn(b, s, heads, d, device="cuda", dtype=torch.bfloat16).transpose(1, 2).requires_grad_()
        q, k, v = make(h), make(hkv), make(hkv)
        row = {"B": b, "H": h, "Hkv": hkv, "S": s, "D": d, "layout": layout}
        try:
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                for rep in range(2):
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=hkv != h)
                    g = torch.randn_like(o)
                    torch.cuda.synchronize()
                    if rep == 1:
                        torch.cuda.memory._record_memory_history(max_entries=100000, context=None, stacks="python")
                    o.backward(g)
                    torch.cuda.synchronize()
                    if rep == 1:
                        snap = torch.cuda.memory._snapshot()
                        torch.cuda.memory._record_memory_history(enabled=None)
                    q.grad = k.grad = v.grad = None
                    del o, g
            row["events"] = [[e["action"][0], e["size"], e["addr"]] for e in snap["device_traces"][0]
                             if e["action"] in ("alloc", "free_completed")]
        except Exception as exc:  # a shape the backend rejects
            row["error"] = str(exc)[:200]
        out["rows"].append(row)
        del q, k, v
        torch.cuda.empty_cache()
    with open(sys.argv[1], "w") as f:
        json.dump(out, f)
    print("rows", len(out["rows"]))


if __name__ == "__main__":
    main()
