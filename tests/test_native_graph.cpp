// Native graphs: JSON round trips (struct and text), every input-error class with the exact field it names,
// the shipped examples, and an independent check: GPT-2 small written op by op in the native format replays
// to the same peak as the built-in gpt2 builder.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "engine/arch/builders.h"
#include "engine/arch/native/native.h"
#include "engine/errors.h"
#include "engine/estimate.h"
#include "models/load_model.h"
#include "models/native_graph.h"
#include "models/zoo.h"
#include "data_dir.h"

using namespace memplan;
using K = NativeOpKind;

namespace {

InputError input_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e;
  }
  FAIL("expected InputError");
  return InputError("", "", "");
}

NativeOp op(K kind, std::vector<std::string> in, std::string out) {
  NativeOp o;
  o.kind = kind;
  o.in = std::move(in);
  o.out = {std::move(out)};
  return o;
}
NativeOp with_shape(NativeOp o, SymShape s) { o.shape = std::move(s); return o; }
NativeOp with_p(NativeOp o, double p) { o.p = p; return o; }
NativeOp releasing(NativeOp o, std::vector<std::string> r) { o.release = std::move(r); return o; }
NativeOp transposed(NativeOp o) { o.transposed = true; return o; }
NativeOp to_dtype(NativeOp o, DType dt) { o.dtype = dt; return o; }
NativeOp split3(std::string in, std::vector<std::string> outs, SymShape each) {
  NativeOp o = with_shape(op(K::split, {std::move(in)}, ""), std::move(each));
  o.out = std::move(outs);
  return o;
}

// A custom op with one output and (optionally) its first input saved.
NativeOp custom(std::string name, std::vector<std::string> in, std::string out, SymShape shape,
                std::optional<DType> dt, bool save_first_input) {
  NativeOp o = op(K::custom, std::move(in), std::move(out));
  o.name = std::move(name);
  o.outputs = {{std::move(shape), dt}};
  if (save_first_input) o.saved = {o.in[0]};
  return o;
}

// 2-layer MLP classifier: 784 -> 256 (relu) -> 10, cross entropy.
NativeGraph mlp() {
  NativeGraph g;
  g.name = "mlp";
  g.inputs = {{"x", {"batch", 784}, {}}, {"labels", {"batch"}, DType::i64}};
  g.params = {{"fc1.weight", {256, 784}, {}, true}, {"fc1.bias", {256}, {}, true},
              {"fc2.weight", {10, 256}, {}, true}, {"fc2.bias", {10}, {}, true}};
  g.layers = {{"fc1", false, {op(K::linear, {"x", "fc1.weight", "fc1.bias"}, "h"), op(K::relu, {"h"}, "a")}},
              {"", false, {op(K::linear, {"a", "fc2.weight", "fc2.bias"}, "logits"),
                           op(K::cross_entropy, {"logits", "labels"}, "loss")}}};
  g.loss = "loss";
  return g;
}

// GPT-2 small (HF gpt2: V 50257, H 768, 12 layers x 12 heads, 1024 positions, dropout 0.1, tied head) written
// with the ops and Python lifetimes of engine/arch/decoders/gpt/gpt2.cpp: Conv1D = transposed linear, gelu_new spelled out
// (pow as a custom op saving its fp32 input), ForCausalLMLoss's pad/contiguous as custom i64 ops.
NativeGraph gpt2_small() {
  const int64_t V = 50257, H = 768, L = 12, nh = 12, hd = 64, I = 3072;
  const double p = 0.1;
  NativeGraph g;
  g.name = "gpt2-native";
  g.inputs = {{"ids", {"batch", "seq"}, DType::i64}, {"pos_ids", {1, "seq"}, DType::i64}};
  g.params = {{"wte", {V, H}, {}, true}, {"wpe", {1024, H}, {}, true}};
  g.build_temp_bytes = {4 * V * H};  // lm_head's own fp32 weight until tie_weights()
  g.build_persistent_bytes = {4};    // transformers' construction-time fp32 scalar
  NativeLayer embed;
  embed.ops = {op(K::embedding, {"ids", "wte"}, "tok"), op(K::embedding, {"pos_ids", "wpe"}, "pos"),
               op(K::add, {"tok", "pos"}, "emb"), with_p(op(K::dropout, {"emb"}, "h.in.0"), p)};
  g.layers.push_back(embed);
  const SymShape bsh{"batch", "seq", H}, heads{"batch", nh, "seq", hd};
  for (int64_t i = 0; i < L; ++i) {
    const std::string l = "h." + std::to_string(i), w = l + ".";
    auto t = [&](const char* n) { return w + n; };
    for (const char* n : {"ln_1.weight", "ln_1.bias"}) g.params.push_back({t(n), {H}, {}, true});
    g.params.push_back({t("attn.c_attn.weight"), {H, 3 * H}, {}, true});
    g.params.push_back({t("attn.c_attn.bias"), {3 * H}, {}, true});
    g.params.push_back({t("attn.c_proj.weight"), {H, H}, {}, true});
    g.params.push_back({t("attn.c_proj.bias"), {H}, {}, true});
    for (const char* n : {"ln_2.weight", "ln_2.bias"}) g.params.push_back({t(n), {H}, {}, true});
    g.params.push_back({t("mlp.c_fc.weight"), {H, I}, {}, true});
    g.params.push_back({t("mlp.c_fc.bias"), {I}, {}, true});
    g.params.push_back({t("mlp.c_proj.weight"), {I, H}, {}, true});
    g.params.push_back({t("mlp.c_proj.bias"), {H}, {}, true});
    const std::string h = "h.in." + std::to_string(i), next = "h.in." + std::to_string(i + 1);
    NativeLayer layer{l, false, {}};
    layer.ops = {
        op(K::layer_norm, {h, t("ln_1.weight"), t("ln_1.bias")}, t("ln1")),
        with_shape(op(K::view, {t("ln1")}, t("ln1.2d")), {"batch*seq", H}),
        transposed(op(K::linear, {t("ln1.2d"), t("attn.c_attn.weight"), t("attn.c_attn.bias")}, t("qkv"))),
        split3(t("qkv"), {t("q"), t("k"), t("v")}, heads),
        with_p(op(K::sdpa, {t("q"), t("k"), t("v")}, t("ctx")), p),
        with_shape(op(K::view, {t("ctx")}, t("ctx.2d")), {"batch*seq", H}),
        transposed(op(K::linear, {t("ctx.2d"), t("attn.c_proj.weight"), t("attn.c_proj.bias")}, t("attn"))),
        with_shape(op(K::view, {t("attn")}, t("attn.3d")), bsh),
        releasing(with_p(op(K::dropout, {t("attn.3d")}, t("a")), p), {t("q"), t("k"), t("v")}),
        releasing(op(K::add, {t("a"), h}, t("h1")), {t("ln1")}),
        op(K::layer_norm, {t("h1"), t("ln_2.weight"), t("ln_2.bias")}, t("ln2")),
        with_shape(op(K::view, {t("ln2")}, t("ln2.2d")), {"batch*seq", H}),
        transposed(op(K::linear, {t("ln2.2d"), t("mlp.c_fc.weight"), t("mlp.c_fc.bias")}, t("fc"))),
        op(K::scale, {t("fc")}, t("half")),
        op(K::pow, {t("fc")}, t("cube")),
        op(K::scale, {t("cube")}, t("scaled")),
        op(K::add, {t("fc"), t("scaled")}, t("inner")),
        op(K::scale, {t("inner")}, t("arg")),
        op(K::tanh, {t("arg")}, t("th")),
        op(K::add_scalar, {t("th")}, t("one_plus")),
        releasing(op(K::mul, {t("half"), t("one_plus")}, t("act")), {t("fc")}),
        transposed(op(K::linear, {t("act"), t("mlp.c_proj.weight"), t("mlp.c_proj.bias")}, t("mlp"))),
        with_shape(op(K::view, {t("mlp")}, t("mlp.3d")), bsh),
        with_p(op(K::dropout, {t("mlp.3d")}, t("m")), p),
        releasing(op(K::add, {t("h1"), t("m")}, next), {t("ln2"), t("a")}),
    };
    g.layers.push_back(layer);
  }
  g.params.push_back({"ln_f.weight", {H}, {}, true});
  g.params.push_back({"ln_f.bias", {H}, {}, true});
  NativeLayer head;
  head.ops = {
      releasing(op(K::layer_norm, {"h.in." + std::to_string(L), "ln_f.weight", "ln_f.bias"}, "hf"), {"tok", "pos"}),
      op(K::linear, {"hf", "wte"}, "logits"),
      to_dtype(op(K::to, {"logits"}, "logits.f32"), DType::f32),
      custom("pad", {"ids"}, "padded", {"batch", "seq+1"}, DType::i64, false),
      custom("contiguous", {"padded"}, "shifted", {"batch", "seq"}, DType::i64, false),
      with_shape(op(K::view, {"logits.f32"}, "flat"), {"batch*seq", V}),
      with_shape(op(K::view, {"shifted"}, "labels"), {"batch*seq"}),
      releasing(op(K::cross_entropy, {"flat", "labels"}, "loss"), {"logits.f32", "logits", "hf"}),
  };
  g.layers.push_back(head);
  g.loss = "loss";
  return g;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::filesystem::path kExamples = std::filesystem::path(MEMPLAN_DATA_DIR) / ".." / "models" / "examples";

RunConfig run(int64_t batch, int64_t seq, Precision prec = Precision::fp32) {
  RunConfig c;
  c.batch_size = batch;
  c.seq_len = seq;
  c.precision = prec;
  return c;
}

ModelSpec spec_of(NativeGraph g) {
  ModelSpec m;
  m.kind = ModelSpec::Kind::graph;
  m.name = g.name;
  m.graph = std::make_shared<NativeGraph>(std::move(g));
  return m;
}

// Parses `text` (a JSON document) and returns the InputError's message.
std::string parse_error(const std::string& text) {
  return input_error([&] { parse_native_graph_text(text); }).what();
}

}  // namespace

TEST_CASE("dims: grammar, canonical text, errors", "[native]") {
  struct Row { const char* text; const char* canonical; DimTerm first; };
  const Row rows[] = {
      {"768", "768", {768, 0, 0}},       {"batch", "batch", {1, 1, 0}},
      {"batch*seq", "batch*seq", {1, 1, 1}}, {"seq*4", "4*seq", {4, 0, 1}},
      {" 2 * batch + seq+1", "2*batch+seq+1", {2, 1, 0}}, {"3*batch*2*batch", "6*batch*batch", {6, 2, 0}},
  };
  for (const auto& r : rows) {
    INFO(r.text);
    const Dim d = Dim::parse(r.text, "x");
    CHECK(d.text() == r.canonical);
    CHECK(d.terms[0] == r.first);
    CHECK(Dim::parse(d.text(), "x") == d);
  }
  CHECK(std::string(input_error([] { Dim::parse("0*seq", "f"); }).what()) == "f: dimensions must be positive (got \"0*seq\")");
  CHECK(input_error([] { Dim::parse("tokens", "f"); }).field() == "f");
  CHECK(input_error([] { Dim::parse("batch**seq", "f"); }).field() == "f");
  CHECK(input_error([] { Dim::parse("", "f"); }).field() == "f");
  CHECK(input_error([] { Dim::parse("99999999999*99999999999", "f"); }).field() == "f");
}

TEST_CASE("round trip: struct -> JSON -> struct and canonical text -> struct -> text", "[native]") {
  NativeGraph every = mlp();  // exercises every optional field of the format
  every.params[0].dtype = DType::bf16;
  every.params[1].trainable = false;
  every.layers[0].checkpoint = true;
  NativeOp c = custom("topk", {"a"}, "vals", {"batch", "2*seq+1"}, DType::f32, true);
  c.out.push_back("idx");
  c.outputs.push_back({{"batch", 2}, DType::i64});
  c.saved.push_back("idx");
  c.fwd_workspace_bytes = {"8*batch", 256};
  c.bwd_workspace_bytes = {"batch*batch*seq"};
  c.release = {"x"};
  every.layers[1].ops.insert(every.layers[1].ops.begin(), c);
  NativeOp sm = op(K::softmax, {"a"}, "probs");
  sm.dim = -1;
  every.layers[1].ops.insert(every.layers[1].ops.begin(), sm);

  for (const NativeGraph& g : {mlp(), gpt2_small(), every}) {
    INFO(g.name);
    const std::string text = write_native_graph(g);
    const NativeGraph back = parse_native_graph_text(text);
    CHECK(back == g);
    CHECK(write_native_graph(back) == text);
  }
  // The shipped examples are canonical text.
  int files = 0;
  for (const auto& f : std::filesystem::directory_iterator(kExamples)) {
    if (f.path().extension() != ".json") continue;
    INFO(f.path().string());
    const std::string text = read_text(f.path());
    CHECK(write_native_graph(parse_native_graph_text(text)) == text);
    ++files;
  }
  CHECK(files >= 2);
}

TEST_CASE("input errors name the path into the description", "[native]") {
  using nlohmann::json;
  const json base = json::parse(write_native_graph(mlp()));
  struct Row { const char* what; std::function<void(json&)> edit; const char* message; };
  const std::vector<Row> rows = {
      {"unknown op kind", [](json& d) { d["layers"][0]["ops"][1]["op"] = "swish"; },
       "layers[0].ops[1].op: unknown op kind (see models/NATIVE-FORMAT.md) (got \"swish\")"},
      {"undefined name", [](json& d) { d["layers"][1]["ops"][0]["in"][0] = "h7"; },
       "layers[1].ops[0].in[0]: undefined tensor (got \"h7\")"},
      {"used before its definition", [](json& d) { d["layers"][0]["ops"][0]["in"][0] = "a"; },
       "layers[0].ops[0].in[0]: undefined tensor (got \"a\")"},
      {"defined twice", [](json& d) { d["layers"][0]["ops"][1]["out"] = "h"; },
       "layers[0].ops[1].out: tensor defined twice (got \"h\")"},
      {"input shadows a param", [](json& d) { d["inputs"][0]["name"] = "fc1.weight"; },
       "inputs[0].name: tensor defined twice (got \"fc1.weight\")"},
      {"wrong arity", [](json& d) { d["layers"][0]["ops"][1]["in"] = {"h", "h"}; },
       "layers[0].ops[1].in: relu takes 1 input (got 2 inputs)"},
      {"too few inputs", [](json& d) { d["layers"][0]["ops"][0]["in"] = {"x"}; },
       "layers[0].ops[0].in: linear takes 2 to 3 inputs (got 1 inputs)"},
      {"zero dim", [](json& d) { d["params"][0]["shape"][1] = 0; }, "params[0].shape[1]: dimensions must be positive (got 0)"},
      {"negative dim", [](json& d) { d["inputs"][0]["shape"][1] = -784; },
       "inputs[0].shape[1]: dimensions must be positive (got -784)"},
      {"overflowing dim", [](json& d) { d["params"][0]["shape"][0] = "99999999999*99999999999"; },
       "params[0].shape[0]: byte count overflows 64 bits (got 99999999999 x 99999999999)"},
      {"dim of the wrong type", [](json& d) { d["params"][0]["shape"][0] = 1.5; },
       "params[0].shape[0]: a dimension is a positive integer or a string such as \"batch*seq\" (got 1.5)"},
      {"unknown dtype", [](json& d) { d["inputs"][0]["dtype"] = "float64"; },
       "inputs[0].dtype: unknown dtype; expected f32, f16, bf16, f8, i64, i32, u8 or bool (got \"float64\")"},
      {"integer trainable param", [](json& d) { d["params"][1]["dtype"] = "i64"; },
       "params[1].dtype: a trainable parameter needs a floating dtype (got i64)"},
      {"unknown key", [](json& d) { d["layers"][0]["ops"][0]["bias"] = true; },
       "layers[0].ops[0].bias: unknown key (got true)"},
      {"attribute of another op", [](json& d) { d["layers"][0]["ops"][1]["p"] = 0.5; },
       "layers[0].ops[1].p: attribute not accepted by this op (got relu)"},
      {"missing output", [](json& d) { d["layers"][0]["ops"][0].erase("out"); }, "layers[0].ops[0].out: required (got absent)"},
      {"dropout p out of range", [](json& d) { d["layers"][0]["ops"][1] = json::parse(R"({"op":"dropout","in":["h"],"out":"a","p":1.0})"); },
       "layers[0].ops[1].p: must be in [0, 1) (got 1.000000)"},
      {"view without shape", [](json& d) { d["layers"][0]["ops"][1] = json::parse(R"({"op":"view","in":["h"],"out":"a"})"); },
       "layers[0].ops[1].shape: view needs its output shape (got absent)"},
      {"custom saves a stranger", [](json& d) {
         d["layers"][0]["ops"][1] = json::parse(R"({"op":"custom","in":["h"],"out":["a"],"outputs":[{"shape":["batch",256]}],"saved":["x"]})");
       }, "layers[0].ops[1].saved[0]: not an input or output of this op (got \"x\")"},
      {"release of an unknown tensor", [](json& d) { d["layers"][0]["ops"][1]["release"] = {"zz"}; },
       "layers[0].ops[1].release[0]: undefined tensor (got \"zz\")"},
      {"checkpointed unnamed layer", [](json& d) { d["layers"][1]["checkpoint"] = true; },
       "layers[1].checkpoint: only a named layer can be checkpointed (got true)"},
      {"undefined loss", [](json& d) { d["loss"] = "nope"; }, "loss: undefined tensor (got \"nope\")"},
      {"format version", [](json& d) { d["memplan_graph"] = 2; },
       "memplan_graph: unsupported format version; this memplan reads 1 (got 2)"},
  };
  for (const auto& r : rows) {
    INFO(r.what);
    json doc = base;
    r.edit(doc);
    CHECK(parse_error(doc.dump()) == r.message);
  }
}

TEST_CASE("build-time errors: shapes and the run configuration", "[native]") {
  auto build_error = [](NativeGraph g, RunConfig c) {
    return std::string(input_error([&] { estimate(spec_of(std::move(g)), c); }).what());
  };
  NativeGraph g = mlp();
  g.params[0].shape = {256, 783};
  CHECK(build_error(g, run(8, 0)) ==
        "layers[0].ops[0].in[0]: last dim must equal the weight's in-features 783 (got [8, 784])");
  g = mlp();  // GraphBuilder's own errors get the op's path as a prefix
  g.layers[1].ops.insert(g.layers[1].ops.begin() + 1, op(K::add, {"a", "logits"}, "bad"));
  CHECK(build_error(g, run(8, 0)) == "layers[1].ops[1].shape: shapes do not broadcast (got 256 vs 10)");
  g = mlp();
  g.inputs[0].shape = {"4611686018427387904*batch", 784};
  CHECK(build_error(g, run(8, 0)) ==
        "inputs[0].shape[0]: byte count overflows 64 bits (got 4611686018427387904 x 8)");
  g = mlp();
  g.loss = "logits";
  CHECK(build_error(g, run(8, 0)) == "loss: must be a scalar (got [8, 10])");
  for (auto& p : g.params) p.trainable = false;
  g.loss = "loss";
  CHECK(build_error(g, run(8, 0)) == "loss: does not require grad: no trainable parameter reaches it (got \"loss\")");
  CHECK(build_error(gpt2_small(), run(8, 0)) == "seq_len: inputs[0].shape[1] uses seq; pass a positive --seq-len (got 0)");
  RunConfig frozen = run(8, 0);
  frozen.frozen_layers = {0};
  CHECK(input_error([&] { estimate(spec_of(mlp()), frozen); }).field() == "frozen_layers");
}

TEST_CASE("GPT-2 small in the native format replays like the built-in builder", "[native]") {
  // Same ops, same lifetimes, same parameters: every figure of the estimate must agree, not just the peak.
  const ModelSpec builtin = load_zoo_model("gpt2");
  const ModelSpec native = spec_of(gpt2_small());
  struct Case { const char* name; RunConfig cfg; };
  RunConfig ckpt = run(8, 1024);
  ckpt.grad_checkpointing = true;
  const Case cases[] = {{"b8 s1024 fp32", run(8, 1024)}, {"b4 s512 amp_bf16", run(4, 512, Precision::amp_bf16)},
                        {"b8 s1024 fp32, every layer checkpointed", ckpt}};
  for (const auto& c : cases) {
    INFO(c.name);
    const Graph gb = build_graph(builtin, c.cfg), gn = build_graph(native, c.cfg);
    CHECK(gn.ops.size() == gb.ops.size());
    CHECK(gn.tensors.size() == gb.tensors.size());
    const Estimate a = estimate(builtin, c.cfg), b = estimate(native, c.cfg);
    CHECK(b.params == a.params);
    CHECK(b.params == 124'439'808);
    CHECK(b.weights_bytes == a.weights_bytes);
    CHECK(b.peak_allocated_bytes() == a.peak_allocated_bytes());
    CHECK(b.replay.peak.ledger.bytes == a.replay.peak.ledger.bytes);
    CHECK(b.allocator.peak_reserved_bytes == a.allocator.peak_reserved_bytes);
  }
}

TEST_CASE("shipped examples load and estimate at b8 s128", "[native]") {
  for (const char* file : {"mlp-classifier.json", "decoder-transformer.json"}) {
    INFO(file);
    const ModelSpec m = load_model((kExamples / file).string());
    REQUIRE(m.kind == ModelSpec::Kind::graph);
    const Estimate e = estimate(m, run(8, 128));
    CHECK(e.params > 0);
    CHECK(e.peak_allocated_bytes() > e.weights_bytes);
    int64_t rows = 0;  // the ledger balances
    for (int64_t r : e.replay.peak.ledger.bytes) rows += r;
    CHECK(rows == e.peak_allocated_bytes());
  }
}
