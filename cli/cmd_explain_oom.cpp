// `memplan explain-oom [--json] [TEXT... | -]`: why did this PyTorch CUDA OOM happen, and what to change.
//
// Input: the message as one or more arguments (joined with spaces, so an unquoted paste works), or stdin
// when the only argument is "-" or there is none. Output: a verdict line, reasons and numbered fixes; or,
// with --json, one object with the fields listed in print_json. Numbers that contradict each other are listed
// (JSON: consistent, inconsistencies) and make the kind `inconsistent`. Text without an OOM message, or with a
// malformed size, is an InputError (exit 2).
#include <istream>
#include <ostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "engine/oom_explain.h"

namespace memplan::cli {
namespace {

struct ExplainOomArgs {
  std::vector<std::string> text;
  bool json = false;
};

std::string read_input(const std::vector<std::string>& args, std::istream& in) {
  if (args.empty() || (args.size() == 1 && args[0] == "-"))
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::string joined;
  for (const auto& a : args) {
    if (!joined.empty()) joined.push_back(' ');
    joined += a;
  }
  return joined;
}

// The JSON contract: exactly these keys, sizes in bytes, reasons and recommendations in order.
void print_json(const OomReport& r, const OomDiagnosis& d, std::ostream& out) {
  nlohmann::ordered_json j;
  j["kind"] = std::string(oom_kind_name(d.kind));
  j["verdict"] = d.verdict;
  j["consistent"] = d.consistent;
  j["inconsistencies"] = d.inconsistencies;
  j["requested_bytes"] = r.requested_bytes;
  j["total_bytes"] = r.total_bytes;
  j["free_bytes"] = r.free_bytes;
  j["process_in_use_bytes"] = r.process_in_use_bytes;
  j["allocated_bytes"] = r.allocated_bytes;
  j["reserved_unallocated_bytes"] = r.reserved_unallocated_bytes;
  j["other_processes_bytes"] = r.other_processes_bytes;
  j["cap_bytes"] = r.cap_bytes;
  j["reasons"] = d.reasons;
  j["recommendations"] = d.recommendations;
  out << j.dump(2) << "\n";
}

void print_text(const OomReport& r, const OomDiagnosis& d, std::ostream& out) {
  out << d.verdict << "\n";
  out << "\nParsed (" << (r.format == OomFormat::legacy ? "torch < 2.1" : "torch >= 2.1")
            << " message): request " << format_size(r.requested_bytes) << ", capacity "
            << format_size(r.total_bytes) << ", free " << format_size(r.free_bytes) << ", allocated "
            << format_size(r.allocated_bytes) << ", reserved-unallocated " << format_size(r.reserved_unallocated_bytes);
  if (r.process_in_use_reported) out << ", this process " << format_size(r.process_in_use_bytes);
  if (r.other_process_count > 0) out << ", other processes " << format_size(r.other_processes_bytes);
  if (r.cap_bytes > 0) out << ", cap " << format_size(r.cap_bytes);
  if (r.reserved_printed_bytes >= 0) out << ", reserved " << format_size(r.reserved_printed_bytes);
  out << "\n";
  if (!d.consistent) {
    out << "\nInconsistent numbers (they cannot all hold at one instant):\n";
    for (const auto& s : d.inconsistencies) out << "  - " << s << "\n";
  }
  out << "\nWhy:\n";
  for (const auto& s : d.reasons) out << "  - " << s << "\n";
  out << "\nWhat to try, in order:\n";
  for (size_t i = 0; i < d.recommendations.size(); ++i)
    out << "  " << (i + 1) << ". " << d.recommendations[i] << "\n";
}

}  // namespace

void register_explain_oom(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<ExplainOomArgs>();
  CLI::App* sub = app.add_subcommand("explain-oom", "Explain a PyTorch CUDA out-of-memory message and what to change");
  sub->add_option("text", args->text, "The OOM message (or traceback); '-' or nothing reads stdin");
  sub->add_flag("--json", args->json, "Print one JSON object instead of text");
  sub->callback([args, &ctx] {
    std::ostream& out = ctx.out;
    const std::string input = read_input(args->text, ctx.in);
    const OomReport report = parse_oom_message(input);  // InputError -> exit 2 in main
    const OomDiagnosis diagnosis = classify(report);
    if (args->json) print_json(report, diagnosis, out);
    else print_text(report, diagnosis, out);
  });
}

}  // namespace memplan::cli
