// Native graph JSON: a strict reader (every key known, every value typed, errors by path) and a canonical
// writer. The writer builds ordered_json values and prints them with its own layout so that the text is both
// stable (byte-identical on a round trip) and readable (one op per line).
#include "models/native_graph.h"

#include <initializer_list>

#include "engine/errors.h"
#include "models/json_input.h"
#include "models/lora_config.h"

namespace memplan {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr int kFormatVersion = 1;

// ---------------------------------------------------------------- reading

void known_keys(const json& obj, const std::string& path, std::initializer_list<std::string_view> keys) {
  for (const auto& [k, v] : obj.items()) {
    bool ok = false;
    for (auto key : keys) ok = ok || key == k;
    if (!ok) throw InputError(path.empty() ? k : path + "." + k, v.dump(), "unknown key");
  }
}

const json& object_at(const json& v, const std::string& path) {
  if (!v.is_object()) throw InputError(path, v.dump(), "must be an object");
  return v;
}

const json& array_at(const json& v, const std::string& path) {
  if (!v.is_array()) throw InputError(path, v.dump(), "must be an array");
  return v;
}

const json& need(const json& obj, const char* key, const std::string& path) {
  auto it = obj.find(key);
  if (it == obj.end()) throw InputError(path + key, "absent", "required");
  return *it;
}

std::string string_at(const json& v, const std::string& path) {
  if (!v.is_string()) throw InputError(path, v.dump(), "must be a string");
  return v.get<std::string>();
}

bool bool_at(const json& v, const std::string& path) {
  if (!v.is_boolean()) throw InputError(path, v.dump(), "must be true or false");
  return v.get<bool>();
}

std::vector<std::string> names_at(const json& v, const std::string& path) {
  std::vector<std::string> out;
  for (size_t i = 0; i < array_at(v, path).size(); ++i) out.push_back(string_at(v[i], path + "[" + std::to_string(i) + "]"));
  return out;
}

DType dtype_at(const json& v, const std::string& path) {
  const std::string s = string_at(v, path);
  auto dt = parse_dtype(s);
  if (!dt) throw InputError(path, "\"" + s + "\"", "unknown dtype; expected f32, f16, bf16, f8, i64, i32, u8 or bool");
  return *dt;
}

Dim dim_at(const json& v, const std::string& path) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX) : v.get<int64_t>() <= 0)
      throw InputError(path, v.dump(), v.is_number_unsigned() ? "dimension overflows 64 bits" : "dimensions must be positive");
    return Dim(v.get<int64_t>());
  }
  if (v.is_string()) return Dim::parse(v.get<std::string>(), path);
  throw InputError(path, v.dump(), "a dimension is a positive integer or a string such as \"batch*seq\"");
}

SymShape shape_at(const json& v, const std::string& path) {
  SymShape s;
  for (size_t i = 0; i < array_at(v, path).size(); ++i) s.push_back(dim_at(v[i], path + "[" + std::to_string(i) + "]"));
  return s;
}

NativeOp read_op(const json& j, const std::string& path) {
  object_at(j, path);
  known_keys(j, path, {"op", "name", "in", "out", "transposed", "shape", "dim", "dtype", "p", "causal", "outputs",
                       "saved", "fwd_workspace_bytes", "bwd_workspace_bytes", "release"});
  const std::string p = path + ".";
  NativeOp op;
  const std::string kind = string_at(need(j, "op", p), p + "op");
  auto k = parse_native_op_kind(kind);
  if (!k) throw InputError(p + "op", "\"" + kind + "\"", "unknown op kind (see models/NATIVE-FORMAT.md)");
  op.kind = *k;
  if (j.contains("in")) op.in = names_at(j["in"], p + "in");
  const json& out = need(j, "out", p);
  if (native_op_info(op.kind).multi_out) op.out = names_at(out, p + "out");
  else op.out = {string_at(out, p + "out")};
  if (j.contains("name")) op.name = string_at(j["name"], p + "name");
  if (j.contains("transposed")) op.transposed = bool_at(j["transposed"], p + "transposed");
  if (j.contains("shape")) op.shape = shape_at(j["shape"], p + "shape");
  if (j.contains("dim")) {
    if (!j["dim"].is_number_integer()) throw InputError(p + "dim", j["dim"].dump(), "must be an integer");
    op.dim = j["dim"].get<int64_t>();
  }
  if (j.contains("dtype")) op.dtype = dtype_at(j["dtype"], p + "dtype");
  if (j.contains("p")) {
    if (!j["p"].is_number()) throw InputError(p + "p", j["p"].dump(), "must be a number in [0, 1)");
    op.p = j["p"].get<double>();
  }
  if (j.contains("causal")) op.causal = bool_at(j["causal"], p + "causal");
  if (j.contains("outputs")) {
    const json& outs = array_at(j["outputs"], p + "outputs");
    for (size_t i = 0; i < outs.size(); ++i) {
      const std::string q = p + "outputs[" + std::to_string(i) + "]";
      known_keys(object_at(outs[i], q), q, {"shape", "dtype"});
      NativeOutput o;
      o.shape = shape_at(need(outs[i], "shape", q + "."), q + ".shape");
      if (outs[i].contains("dtype")) o.dtype = dtype_at(outs[i]["dtype"], q + ".dtype");
      op.outputs.push_back(std::move(o));
    }
  }
  if (j.contains("saved")) op.saved = names_at(j["saved"], p + "saved");
  if (j.contains("fwd_workspace_bytes")) op.fwd_workspace_bytes = shape_at(j["fwd_workspace_bytes"], p + "fwd_workspace_bytes");
  if (j.contains("bwd_workspace_bytes")) op.bwd_workspace_bytes = shape_at(j["bwd_workspace_bytes"], p + "bwd_workspace_bytes");
  if (j.contains("release")) op.release = names_at(j["release"], p + "release");
  return op;
}

// ---------------------------------------------------------------- writing

ordered_json dim_json(const Dim& d) {
  if (d.is_constant()) return d.terms[0].coeff;
  return d.text();
}

ordered_json shape_json(const SymShape& s) {
  ordered_json a = ordered_json::array();
  for (const Dim& d : s) a.push_back(dim_json(d));
  return a;
}

ordered_json op_json(const NativeOp& op) {
  ordered_json j;
  j["op"] = native_op_info(op.kind).name;
  if (!op.name.empty()) j["name"] = op.name;
  j["in"] = op.in;
  if (native_op_info(op.kind).multi_out) j["out"] = op.out;
  else j["out"] = op.out.empty() ? "" : op.out[0];
  if (op.transposed) j["transposed"] = true;
  if (!op.shape.empty()) j["shape"] = shape_json(op.shape);
  if (op.dim) j["dim"] = *op.dim;
  if (op.dtype) j["dtype"] = dtype_name(*op.dtype);
  if (op.p != 0.0) j["p"] = op.p;
  if (op.causal) j["causal"] = true;
  if (!op.outputs.empty()) {
    ordered_json outs = ordered_json::array();
    for (const auto& o : op.outputs) {
      ordered_json e;
      e["shape"] = shape_json(o.shape);
      if (o.dtype) e["dtype"] = dtype_name(*o.dtype);
      outs.push_back(std::move(e));
    }
    j["outputs"] = std::move(outs);
  }
  if (!op.saved.empty()) j["saved"] = op.saved;
  if (!op.fwd_workspace_bytes.empty()) j["fwd_workspace_bytes"] = shape_json(op.fwd_workspace_bytes);
  if (!op.bwd_workspace_bytes.empty()) j["bwd_workspace_bytes"] = shape_json(op.bwd_workspace_bytes);
  if (!op.release.empty()) j["release"] = op.release;
  return j;
}

// One line, ", " and ": " separators.
std::string inline_text(const ordered_json& v) {
  std::string s;
  if (v.is_object()) {
    s = "{";
    bool first = true;
    for (const auto& [k, e] : v.items()) {
      s += (first ? "" : ", ") + ordered_json(k).dump() + ": " + inline_text(e);
      first = false;
    }
    return s + "}";
  }
  if (v.is_array()) {
    s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + inline_text(v[i]);
    return s + "]";
  }
  return v.dump();
}

// `"key": [` + one inline element per line + `]`, at `indent` spaces.
std::string list_text(const std::vector<ordered_json>& items, const std::string& indent) {
  if (items.empty()) return "[]";
  std::string s = "[\n";
  for (size_t i = 0; i < items.size(); ++i) s += indent + "  " + inline_text(items[i]) + (i + 1 < items.size() ? ",\n" : "\n");
  return s + indent + "]";
}

}  // namespace

NativeGraph parse_native_graph(const json& doc) {
  object_at(doc, "model");
  known_keys(doc, "", {"memplan_graph", "name", "inputs", "params", "build_temp_bytes", "build_persistent_bytes",
                       "lora", "quantization", "layers", "loss"});
  const json& ver = need(doc, "memplan_graph", "");
  if (!ver.is_number_integer() || ver.get<int64_t>() != kFormatVersion)
    throw InputError("memplan_graph", ver.dump(), "unsupported format version; this memplan reads 1");
  NativeGraph g;
  if (doc.contains("name")) g.name = string_at(doc["name"], "name");
  if (doc.contains("inputs")) {
    const json& a = array_at(doc["inputs"], "inputs");
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string p = "inputs[" + std::to_string(i) + "]";
      known_keys(object_at(a[i], p), p, {"name", "shape", "dtype"});
      NativeInput in;
      in.name = string_at(need(a[i], "name", p + "."), p + ".name");
      in.shape = shape_at(need(a[i], "shape", p + "."), p + ".shape");
      if (a[i].contains("dtype")) in.dtype = dtype_at(a[i]["dtype"], p + ".dtype");
      g.inputs.push_back(std::move(in));
    }
  }
  if (doc.contains("params")) {
    const json& a = array_at(doc["params"], "params");
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string p = "params[" + std::to_string(i) + "]";
      known_keys(object_at(a[i], p), p, {"name", "shape", "dtype", "trainable"});
      NativeParam par;
      par.name = string_at(need(a[i], "name", p + "."), p + ".name");
      par.shape = shape_at(need(a[i], "shape", p + "."), p + ".shape");
      if (a[i].contains("dtype")) par.dtype = dtype_at(a[i]["dtype"], p + ".dtype");
      if (a[i].contains("trainable")) par.trainable = bool_at(a[i]["trainable"], p + ".trainable");
      g.params.push_back(std::move(par));
    }
  }
  if (doc.contains("build_temp_bytes")) g.build_temp_bytes = shape_at(doc["build_temp_bytes"], "build_temp_bytes");
  if (doc.contains("build_persistent_bytes"))
    g.build_persistent_bytes = shape_at(doc["build_persistent_bytes"], "build_persistent_bytes");
  if (doc.contains("lora")) g.lora = parse_lora_json(doc["lora"]);  // models/lora_config.h: errors name lora.<key>
  if (doc.contains("quantization")) g.quantization = parse_quant_json(doc["quantization"]);
  const json& layers = array_at(need(doc, "layers", ""), "layers");
  for (size_t l = 0; l < layers.size(); ++l) {
    const std::string p = "layers[" + std::to_string(l) + "]";
    known_keys(object_at(layers[l], p), p, {"name", "checkpoint", "ops"});
    NativeLayer layer;
    if (layers[l].contains("name")) layer.name = string_at(layers[l]["name"], p + ".name");
    if (layers[l].contains("checkpoint")) layer.checkpoint = bool_at(layers[l]["checkpoint"], p + ".checkpoint");
    const json& ops = array_at(need(layers[l], "ops", p + "."), p + ".ops");
    for (size_t o = 0; o < ops.size(); ++o) layer.ops.push_back(read_op(ops[o], p + ".ops[" + std::to_string(o) + "]"));
    g.layers.push_back(std::move(layer));
  }
  g.loss = string_at(need(doc, "loss", ""), "loss");
  validate_native(g);
  return g;
}

NativeGraph parse_native_graph_text(const std::string& text) {
  return parse_native_graph(parse_json_input(text, "model", "native graph text"));  // depth-capped parse
}

std::string write_native_graph(const NativeGraph& g) {
  std::vector<ordered_json> inputs, params, layers;
  for (const auto& in : g.inputs) {
    ordered_json j;
    j["name"] = in.name;
    j["shape"] = shape_json(in.shape);
    if (in.dtype) j["dtype"] = dtype_name(*in.dtype);
    inputs.push_back(std::move(j));
  }
  for (const auto& p : g.params) {
    ordered_json j;
    j["name"] = p.name;
    j["shape"] = shape_json(p.shape);
    if (p.dtype) j["dtype"] = dtype_name(*p.dtype);
    if (!p.trainable) j["trainable"] = false;
    params.push_back(std::move(j));
  }
  std::string s = "{\n  \"memplan_graph\": " + std::to_string(kFormatVersion) + ",\n";
  if (!g.name.empty()) s += "  \"name\": " + ordered_json(g.name).dump() + ",\n";
  s += "  \"inputs\": " + list_text(inputs, "  ") + ",\n";
  s += "  \"params\": " + list_text(params, "  ") + ",\n";
  if (!g.build_persistent_bytes.empty())
    s += "  \"build_persistent_bytes\": " + shape_json(g.build_persistent_bytes).dump() + ",\n";
  if (!g.build_temp_bytes.empty()) s += "  \"build_temp_bytes\": " + shape_json(g.build_temp_bytes).dump() + ",\n";
  if (g.lora) s += "  \"lora\": " + inline_text(lora_to_json(*g.lora)) + ",\n";
  if (g.quantization) s += "  \"quantization\": " + inline_text(quant_to_json(*g.quantization)) + ",\n";
  s += "  \"layers\": [";
  for (size_t l = 0; l < g.layers.size(); ++l) {
    const NativeLayer& layer = g.layers[l];
    std::vector<ordered_json> ops;
    for (const auto& op : layer.ops) ops.push_back(op_json(op));
    s += std::string(l ? "," : "") + "\n    {";
    if (!layer.name.empty()) s += "\"name\": " + ordered_json(layer.name).dump() + ", ";
    if (layer.checkpoint) s += "\"checkpoint\": true, ";
    s += "\"ops\": " + list_text(ops, "    ") + "}";
  }
  s += g.layers.empty() ? "],\n" : "\n  ],\n";
  s += "  \"loss\": " + ordered_json(g.loss).dump() + "\n}\n";
  return s;
}

}  // namespace memplan
