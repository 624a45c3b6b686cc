import json
def hf(mt, cfg, attn="sdpa"): return {"source":"huggingface","model_type":mt,"config":cfg,"attn_implementation":attn}
Q15 = {"hidden_size":1536,"intermediate_size":8960,"num_hidden_layers":8,"num_attention_heads":12,"num_key_value_heads":2,"vocab_size":151936,"max_position_embeddings":32768,"tie_word_embeddings":True}
TL12 = {"hidden_size":2048,"intermediate_size":5632,"num_hidden_layers":12,"num_attention_heads":32,"num_key_value_heads":4,"vocab_size":32000,"max_position_embeddings":4096}
TL22 = dict(TL12, num_hidden_layers=22)
G8 = {"n_layer":8,"n_embd":1024,"n_head":16,"vocab_size":50257,"n_positions":1024}
GS = {"n_layer":12,"n_embd":768,"n_head":12,"vocab_size":50257,"n_positions":1024}
GM = {"n_layer":24,"n_embd":1024,"n_head":16,"vocab_size":50257,"n_positions":1024}
MIS6 = {"hidden_size":4096,"intermediate_size":14336,"num_hidden_layers":6,"num_attention_heads":32,"num_key_value_heads":8,"vocab_size":32000,"max_position_embeddings":32768}
BERTB = {"hidden_size":768,"num_hidden_layers":12,"num_attention_heads":12,"intermediate_size":3072}
L1B = {"hidden_size":2048,"intermediate_size":8192,"num_hidden_layers":16,"num_attention_heads":32,"num_key_value_heads":8,"vocab_size":128256,"max_position_embeddings":131072,"tie_word_embeddings":True}
GEM = {"hidden_size":2304,"intermediate_size":9216,"num_hidden_layers":6,"num_attention_heads":8,"num_key_value_heads":4,"head_dim":256,"vocab_size":256000,"max_position_embeddings":8192,"sliding_window":4096}
def tr(id, model, b, s, prec, opt, impl="foreach", ckpt=False, ga=1, **kw):
    c = {"id":id,"model":model,"mode":"training","batch_size":b,"seq_len":s,"precision":prec,"optimizer":opt,"optimizer_impl":impl,"grad_checkpointing":ckpt,"grad_accum_steps":ga}
    c.update(kw); return c
def tv(id, name, b, prec, opt, impl="foreach", img=224):
    return {"id":id,"model":{"source":"torchvision","name":name},"mode":"training","batch_size":b,"image_size":img,"num_classes":1000,"precision":prec,"optimizer":opt,"optimizer_impl":impl,"grad_checkpointing":False,"grad_accum_steps":1}
def inf(id, model, b, s, prec, g):
    return {"id":id,"model":model,"mode":"inference","batch_size":b,"seq_len":s,"precision":prec,"generate_tokens":g}
cases = [
 tr("h2-q15l8-ampbf16-adamw-b2s2048-ckpt", hf("qwen2",Q15), 2, 2048, "amp_bf16", "adamw", ckpt=True),
 tr("h2-tl12-bf16-adafactor-b4s1024", hf("llama",TL12), 4, 1024, "bf16", "adafactor", impl="default"),
 tr("h2-gpt2l8-bf16-sgdmom-b16x2s512", hf("gpt2",G8), 16, 512, "bf16", "sgd_momentum", ga=2),
 tr("h2-mis6-ampfp16-adamwfused-b2s2048", hf("mistral",MIS6), 2, 2048, "amp_fp16", "adamw", impl="fused"),
 tr("h2-bertb-fp32-adamw-b16s256-eager", hf("bert",BERTB,"eager"), 16, 256, "fp32", "adamw"),
 tr("h2-gpt2s-ampbf16-adamw-b8s1024-ckpt-eager", hf("gpt2",GS,"eager"), 8, 1024, "amp_bf16", "adamw", ckpt=True),
 tr("h2-tl22-ampbf16-adamw-b2s4096", hf("llama",TL22), 2, 4096, "amp_bf16", "adamw"),
 tr("h2-l1b-bf16-adamw-b4s1024-ckptevery2", hf("llama",L1B), 4, 1024, "bf16", "adamw", ckpt=True, grad_checkpointing_layers=list(range(0,16,2))),
 tr("h2-gpt2m-ampbf16-sgd-b4s1024-expseg", hf("gpt2",GM), 4, 1024, "amp_bf16", "sgd_momentum", alloc_conf="expandable_segments:True"),
 tv("h2-resnet152-fp32-sgdmom-b32", "resnet152", 32, "fp32", "sgd_momentum"),
 tv("h2-vitb16-bf16-adamw-b96", "vit_b_16", 96, "bf16", "adamw"),
 tv("h2-resnet50-ampbf16-adamw-b128", "resnet50", 128, "amp_bf16", "adamw"),
 inf("h2-gem2l6-infer-bf16-b4s2048-g16", hf("gemma2",GEM), 4, 2048, "bf16", 16),
 inf("h2-gem2swl6-infer-bf16-b2s4096-g16", hf("gemma2",dict(GEM, sliding_window=1024)), 2, 4096, "bf16", 16),
 inf("h2-q15l8-infer-bf16-b16s1024-g32", hf("qwen2",Q15), 16, 1024, "bf16", 32),
 inf("h2-gpt2s-infer-fp32-b8s1024-g32", hf("gpt2",GS), 8, 1024, "fp32", 32),
 inf("h2-tl22-infer-ampbf16-b4s2048-g16", hf("llama",TL22), 4, 2048, "amp_bf16", 16),
]
with open("h2-input.jsonl","w") as f:
    for c in cases: f.write(json.dumps(c)+"\n")
