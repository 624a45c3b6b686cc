// OOM message parsing and classification.
//
// Stages:
//   1. squeeze: a lower-cased copy of the text with all whitespace and "[rankN]:" line prefixes removed, plus
//      the original offset of every kept character. Matching on it makes wrapped, re-indented and
//      hard-wrapped pastes look alike; offsets let errors quote the user's own text.
//   2. parse: find "out of memory. tried to allocate", then walk the legacy or current layout (see the
//      header) with a cursor. Each anchor is tried in order; the first that parses wins.
//   3. check: the numbers against each other, within their printed rounding (check_consistency);
//   4. classify: `inconsistent` when they disagree, else the first matching rule of fraction_cap,
//      other_processes, fragmentation, capacity.
#include "engine/oom_explain.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>

#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {
namespace {

constexpr int64_t kKiB = int64_t{1} << 10;
constexpr int64_t kTiB = int64_t{1} << 40;
// More decimals than this are refused: frac_digits (< 10^6) x 1 TiB stays below 2^61, so rounding the
// fractional part cannot overflow. PyTorch prints two.
constexpr int kMaxDecimals = 6;

// Room comparisons add a possibly unlimited headroom (no cap) to a byte count, and tolerances of pasted sizes
// add up; saturate instead of throwing.
int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}

// ---- stage 1: squeeze ------------------------------------------------------------------------------------

struct Squeezed {
  std::string s;             // lower-cased, no whitespace
  std::vector<size_t> orig;  // orig[i] = offset in the input of s[i]
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// Length of a torchrun "[rankN]:" prefix starting at `i` (after leading spaces), else 0.
size_t rank_prefix_len(std::string_view t, size_t i) {
  constexpr std::string_view kOpen = "[rank";
  if (t.substr(i, kOpen.size()) != kOpen) return 0;
  size_t j = i + kOpen.size();
  size_t digits = 0;
  while (j < t.size() && is_digit(t[j])) ++j, ++digits;
  if (digits == 0 || t.substr(j, 2) != "]:") return 0;
  return j + 2 - i;
}

Squeezed squeeze(std::string_view t) {
  Squeezed q;
  q.s.reserve(t.size());
  q.orig.reserve(t.size());
  bool line_start = true;
  for (size_t i = 0; i < t.size();) {
    if (t[i] == '\n' || t[i] == '\r') { line_start = true; ++i; continue; }
    if (is_space(t[i])) { ++i; continue; }
    if (line_start) {
      line_start = false;
      if (size_t n = rank_prefix_len(t, i)) { i += n; continue; }
    }
    q.s.push_back(lower(t[i]));
    q.orig.push_back(i);
    ++i;
  }
  return q;
}

// The user's text as one quoted line for an error message: whitespace runs become one space, at most `max`
// characters, "..." when cut.
std::string quote(std::string_view t, size_t max) {
  std::string out(1, '\'');
  bool space = false;
  size_t n = 0;
  for (char c : t) {
    if (n == max) {
      out.append("...");
      break;
    }
    if (is_space(c)) {
      space = !out.empty() && out.size() > 1;
      continue;
    }
    if (space) out.push_back(' '), ++n;
    space = false;
    out.push_back(c), ++n;
  }
  out.push_back('\'');
  return out;
}

// Literals are written with spaces for reading; matching drops them, like squeeze() does for the text.
std::string lit(std::string_view words) {
  std::string out;
  for (char c : words)
    if (!is_space(c)) out.push_back(lower(c));
  return out;
}

// ---- stage 2: parse --------------------------------------------------------------------------------------

class Cursor {
 public:
  Cursor(const Squeezed& q, std::string_view text, size_t at) : q_(q), text_(text), i_(at) {}

  bool at_end() const { return i_ >= q_.s.size(); }
  char peek() const { return at_end() ? '\0' : q_.s[i_]; }

  bool try_lit(std::string_view words) {
    std::string l = lit(words);
    if (q_.s.compare(i_, l.size(), l) != 0) return false;
    i_ += l.size();
    return true;
  }

  void expect(std::string_view words, const char* field) {
    if (!try_lit(words)) fail(field, "expected '" + std::string(words) + "'");
  }

  // The closing words of a message may be cut off: accept them whole, or any prefix that runs to the end.
  void expect_or_cut(std::string_view words, const char* field) {
    std::string l = lit(words);
    size_t n = std::min(l.size(), q_.s.size() - i_);
    if (q_.s.compare(i_, n, l, 0, n) != 0) fail(field, "expected '" + std::string(words) + "'");
    i_ += n;
  }

  // Decimal integer (PID, GPU index, whole part of a size). nullopt when no digit is next.
  std::optional<int64_t> integer(const char* field) {
    if (!is_digit(peek())) return std::nullopt;
    const size_t start = i_;
    int64_t v = 0;
    while (is_digit(peek())) {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, q_.s[i_++] - '0', &v))
        fail_at(start, field, "number overflows 64 bits");
    }
    return v;
  }

  // A format_size value: digits [. digits] [unit], unit one of bytes, B, KiB, MiB, GiB, TiB (no unit means
  // bytes). Rounded to the nearest byte of the decimal value; throws on a malformed number or overflow.
  int64_t size(const char* field) {
    size_t start = i_;
    std::optional<int64_t> whole = integer(field);
    if (!whole) fail(field, "expected a size such as '20.00 MiB'");
    int64_t frac = 0, scale = 1;
    int decimals = 0;
    if (peek() == '.' && i_ + 1 < q_.s.size() && is_digit(q_.s[i_ + 1])) {
      ++i_;
      while (is_digit(peek())) {
        if (++decimals > kMaxDecimals) fail_at(start, field, "too many decimal places in a size");
        frac = frac * 10 + (q_.s[i_++] - '0');
        scale *= 10;
      }
    }
    // "1.2.3" or "1,024": a second separator glued to digits is no format_size output.
    if ((peek() == '.' || peek() == ',') && i_ + 1 < q_.s.size() && is_digit(q_.s[i_ + 1]))
      fail_at(start, field, "malformed number");
    int64_t unit = 1;
    bool has_unit = true;
    if (try_lit("tib")) unit = kTiB;
    else if (try_lit("gib")) unit = kGiB;
    else if (try_lit("mib")) unit = kMiB;
    else if (try_lit("kib")) unit = kKiB;
    else if (try_lit("bytes") || try_lit("b")) unit = 1;
    else has_unit = false;
    if (!has_unit) {
      // "MB", "GB", "PiB"...: a unit PyTorch never prints; refuse rather than guess decimal vs binary.
      size_t j = i_;
      while (j < q_.s.size() && j - i_ < 3 && is_lower(q_.s[j])) ++j;
      for (size_t k = i_ + 1; k < j; ++k)
        if (q_.s[k] == 'b') fail_at(start, field, "unknown size unit (expected B, KiB, MiB, GiB or TiB)");
      if (at_end()) fail_at(start, field, "message is cut off inside a size");
    }
    // Half a unit of the last printed digit: "3.30 GiB" is 3.30 +- 0.005 GiB. Below one byte: exact.
    last_tolerance_ = unit / (2 * scale);
    int64_t bytes = 0;
    try {
      bytes = checked_mul(*whole, unit, field);
      if (frac != 0) bytes = checked_add(bytes, (frac * unit + scale / 2) / scale, field);  // < 2^61, see top
    } catch (const InputError&) {
      fail_at(start, field, "size overflows 64-bit bytes");
    }
    return bytes;
  }

  // Of the last size() parsed.
  int64_t last_tolerance() const { return last_tolerance_; }

  [[noreturn]] void fail(const char* field, const std::string& why) const { fail_at(i_, field, why); }

  [[noreturn]] void fail_at(size_t at, const char* field, const std::string& why) const {
    if (at >= q_.s.size()) throw InputError(field, "end of text", why + "; the message is cut off");
    throw InputError(field, quote(text_.substr(q_.orig[at]), 32), why);
  }

 private:
  const Squeezed& q_;
  std::string_view text_;
  size_t i_;
  int64_t last_tolerance_ = 0;
};

void parse_legacy(Cursor& c, OomReport& r) {
  r.format = OomFormat::legacy;
  c.expect("(GPU", "device");
  if (auto d = c.integer("device")) r.device = static_cast<int>(std::min<int64_t>(*d, 1 << 20));
  c.expect(";", "device");
  r.total_bytes = c.size("total_bytes");
  r.tolerance.total = c.last_tolerance();
  c.expect("total capacity;", "total_bytes");
  r.allocated_bytes = c.size("allocated_bytes");
  r.tolerance.allocated = c.last_tolerance();
  c.expect("already allocated;", "allocated_bytes");
  r.free_bytes = c.size("free_bytes");
  r.tolerance.free = c.last_tolerance();
  c.expect("free;", "free_bytes");
  int64_t v = c.size("reserved_bytes");
  if (c.try_lit("allowed;")) {
    r.cap_bytes = v;
    r.tolerance.cap = c.last_tolerance();
    v = c.size("reserved_bytes");
  }
  if (c.peek() == 'c') {  // torch <= 1.3: "U cached)" is already reserved minus allocated
    c.expect_or_cut("cached)", "reserved_bytes");
    r.reserved_unallocated_bytes = v;
    r.tolerance.reserved_unallocated = c.last_tolerance();
  } else {
    c.expect_or_cut("reserved in total by PyTorch)", "reserved_bytes");
    // Two independently rounded values: reserved can print a hair below allocated (check_consistency says
    // when it is more than a hair).
    r.reserved_printed_bytes = v;
    r.tolerance.reserved_printed = c.last_tolerance();
    r.reserved_unallocated_bytes = std::max<int64_t>(0, v - r.allocated_bytes);
    r.tolerance.reserved_unallocated = r.tolerance.reserved_printed + r.tolerance.allocated;
  }
}

void parse_current(Cursor& c, OomReport& r) {
  r.format = OomFormat::current;
  c.expect("GPU", "device");
  if (auto d = c.integer("device")) r.device = static_cast<int>(std::min<int64_t>(*d, 1 << 20));
  c.expect("has a total capacity of", "total_bytes");
  r.total_bytes = c.size("total_bytes");
  r.tolerance.total = c.last_tolerance();
  c.expect("of which", "free_bytes");
  r.free_bytes = c.size("free_bytes");
  r.tolerance.free = c.last_tolerance();
  c.expect("is free.", "free_bytes");
  // NVML's process list, in its own order; this process may appear anywhere in it, or not at all.
  for (;;) {
    if (c.try_lit("Process")) {
      if (!c.integer("other_processes_bytes")) c.fail("other_processes_bytes", "expected a process id");
      c.expect("has", "other_processes_bytes");
      r.other_processes_bytes = checked_add(r.other_processes_bytes, c.size("other_processes_bytes"),
                                            "other_processes_bytes");
      r.tolerance.other_processes = sat_add(r.tolerance.other_processes, c.last_tolerance());
      c.expect("memory in use.", "other_processes_bytes");
      ++r.other_process_count;
    } else if (c.try_lit("Including non-PyTorch memory, this process has")) {
      r.process_in_use_bytes = c.size("process_in_use_bytes");
      r.tolerance.process_in_use = c.last_tolerance();
      r.process_in_use_reported = true;
      c.expect("memory in use.", "process_in_use_bytes");
    } else {
      break;
    }
  }
  if (is_digit(c.peek())) {
    r.cap_bytes = c.size("cap_bytes");
    r.tolerance.cap = c.last_tolerance();
    c.expect("allowed;", "cap_bytes");
  }
  c.expect("Of the allocated memory", "allocated_bytes");
  r.allocated_bytes = c.size("allocated_bytes");
  r.tolerance.allocated = c.last_tolerance();
  c.expect("is allocated by PyTorch,", "allocated_bytes");
  if (c.try_lit("with")) {
    r.private_pool_bytes = c.size("private_pool_bytes");
    c.expect("allocated in private pools (e.g., CUDA Graphs),", "private_pool_bytes");
  }
  c.expect("and", "reserved_unallocated_bytes");
  r.reserved_unallocated_bytes = c.size("reserved_unallocated_bytes");
  r.tolerance.reserved_unallocated = c.last_tolerance();
  c.expect_or_cut("is reserved by PyTorch but unallocated.", "reserved_unallocated_bytes");
}

OomReport parse_at(const Squeezed& q, std::string_view text, size_t after_anchor) {
  Cursor c(q, text, after_anchor);
  OomReport r;
  r.requested_bytes = c.size("requested_bytes");
  r.tolerance.requested = c.last_tolerance();
  if (c.peek() == '(') {
    parse_legacy(c, r);
  } else {
    c.expect(".", "requested_bytes");
    parse_current(c, r);
  }
  return r;
}

}  // namespace

OomReport parse_oom_message(std::string_view text) {
  const Squeezed q = squeeze(text);
  // The full message first; then the allocator's report alone ("Tried to allocate 512.00 MiB (GPU 0; ..."), as
  // articles and chat pastes quote it without the "CUDA out of memory." that precedes it.
  std::optional<InputError> first_error;
  for (const std::string& anchor : {lit("out of memory. Tried to allocate"), lit("Tried to allocate")}) {
    for (size_t at = q.s.find(anchor); at != std::string::npos; at = q.s.find(anchor, at + 1)) {
      try {
        return parse_at(q, text, at + anchor.size());
      } catch (const InputError& e) {
        if (!first_error) first_error = e;
      }
    }
  }
  if (first_error) throw *first_error;

  const std::string got = q.s.empty() ? std::string("empty input") : quote(text, 40);
  if (q.s.find(lit("out of memory")) != std::string::npos)
    throw InputError("oom_message", got,
                     "an 'out of memory' error without the caching allocator's 'Tried to allocate' report "
                     "(raised outside PyTorch's allocator, e.g. by cuBLAS/NCCL init or a custom kernel)");
  throw InputError("oom_message", got, "no PyTorch 'CUDA out of memory. Tried to allocate ...' message found");
}

// ---- stage 3: classify -----------------------------------------------------------------------------------

std::string_view oom_kind_name(OomKind k) {
  switch (k) {
    case OomKind::capacity: return "capacity";
    case OomKind::fragmentation: return "fragmentation";
    case OomKind::other_processes: return "other_processes";
    case OomKind::fraction_cap: return "fraction_cap";
    case OomKind::inconsistent: return "inconsistent";
  }
  return "capacity";
}

std::string format_size(int64_t bytes) {
  if (bytes < 0) {
    std::string out(1, '-');
    out += format_size(bytes == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -bytes);
    return out;
  }
  if (bytes <= kKiB) return std::to_string(bytes) + " bytes";
  char buf[64];
  double b = static_cast<double>(bytes);
  if (bytes <= kMiB) std::snprintf(buf, sizeof buf, "%.2f KiB", b / kKiB);
  else if (bytes <= kGiB) std::snprintf(buf, sizeof buf, "%.2f MiB", b / kMiB);
  else std::snprintf(buf, sizeof buf, "%.2f GiB", b / kGiB);
  return buf;
}

namespace {

// Memory a process holds outside the caching allocator before any user work: CUDA context, loaded kernels,
// cuBLAS handles. MECHANICS.md §2 measured 0.5-0.85 GiB on H200 (lazy loading); 1 GiB keeps the legacy-format
// estimate of foreign memory below (which cannot see this process's context) from blaming others for it.
constexpr int64_t kContextAllowanceBytes = kGiB;

std::string pct(int64_t part, int64_t whole) {
  if (whole <= 0) return "?%";
  const double ratio = 100.0 * static_cast<double>(part) / static_cast<double>(whole) + 0.5;
  // Sizes from a pasted message need not be consistent (a part far above the whole): say so rather than
  // convert a huge double to int, which is undefined.
  if (!(ratio < 1e6)) return ">999999%";
  const int p = static_cast<int>(ratio);
  if (p == 0 && part > 0) return "<1%";
  return std::to_string(p) + "%";
}

// Inputs to the rules, all in bytes, derived once.
struct Facts {
  int64_t request;     // R: the segment the allocator tried to create
  int64_t reserved;    // allocated + reserved-but-unallocated
  int64_t unalloc;     // cached by the allocator, not usable for R (the allocator had already freed the rest)
  int64_t cap_room;    // cap - reserved, clamped at 0; INT64_MAX without a cap
  int64_t room;        // min(device free, cap_room): what R could have used
  int64_t shortfall;   // R - room, clamped at 0
  int64_t foreign;     // device memory held outside this process (listed or not)
  bool foreign_exact;  // from NVML's per-process numbers rather than an estimate
  int64_t own_non_pytorch;  // this process outside the allocator (context, NCCL); -1 when not reported
};

Facts derive(const OomReport& r) {
  Facts f{};
  f.request = r.requested_bytes;
  f.unalloc = r.reserved_unallocated_bytes;
  f.reserved = checked_add(r.allocated_bytes, r.reserved_unallocated_bytes, "reserved_bytes");
  f.cap_room = r.cap_bytes > 0 ? std::max<int64_t>(0, r.cap_bytes - f.reserved)
                               : std::numeric_limits<int64_t>::max();
  f.room = std::min(r.free_bytes, f.cap_room);
  f.shortfall = std::max<int64_t>(0, f.request - f.room);
  const int64_t used = std::max<int64_t>(0, r.total_bytes - r.free_bytes);
  if (r.process_in_use_reported) {
    // NVML's own figure for this process: the rest of the used memory is someone else's, whether or not
    // NVML listed it (processes of other containers are often missing from the list).
    f.foreign = std::max<int64_t>(r.other_processes_bytes,
                                  checked_sub(used, r.process_in_use_bytes, "process_in_use_bytes"));
    f.foreign_exact = true;
    f.own_non_pytorch =
        std::max<int64_t>(0, checked_sub(r.process_in_use_bytes, f.reserved, "process_in_use_bytes"));
  } else {
    f.foreign = std::max<int64_t>(
        r.other_processes_bytes,
        checked_sub(checked_sub(used, f.reserved, "reserved_bytes"), kContextAllowanceBytes, "reserved_bytes"));
    f.foreign_exact = r.other_process_count > 0;
    f.own_non_pytorch = -1;
  }
  f.foreign = std::max<int64_t>(0, f.foreign);
  return f;
}

// Smallest fraction in hundredths with fraction * total >= need.
int fraction_hundredths_for(int64_t need, int64_t total) {
  if (total <= 0) return 100;
  __int128 n = static_cast<__int128>(need) * 100;
  return static_cast<int>((n + total - 1) / total);
}

std::string fraction_str(int hundredths) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d.%02d", hundredths / 100, hundredths % 100);
  return buf;
}

std::string alloc_conf_rec(const OomReport& r, const Facts& f) {
  if (r.format == OomFormat::legacy)
    // expandable_segments arrived with the torch version that also changed the message layout (2.1).
    return "Reduce fragmentation: set PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512 so cached blocks above "
           "512 MiB are never split by small tensors, or upgrade to torch >= 2.1 and set "
           "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; " +
           format_size(f.unalloc) + " is cached but unusable now.";
  return "Set PYTORCH_ALLOC_CONF=expandable_segments:True (older torch reads PYTORCH_CUDA_ALLOC_CONF): segments "
         "grow in place, so the " + format_size(f.unalloc) +
         " cached in unusable pieces becomes usable and freed pages go back to the device.";
}

// Footprint cuts for a true shortage, most effective and least invasive first (MECHANICS.md §4, §5, §7).
// `cut` <= 0: the size of the cut is unknown (inconsistent numbers, or a request the rounding hides).
void add_footprint_recs(std::vector<std::string>& recs, int64_t cut) {
  const std::string need = cut > 0 ? " (cut needed: at least " + format_size(cut) + ", more at the real peak)" : "";
  recs.push_back("Halve the micro-batch and double gradient accumulation steps (same effective batch): "
                 "activation memory scales with the micro-batch" + need + ".");
  recs.push_back("Enable activation checkpointing (HF: model.gradient_checkpointing_enable(); "
                 "torch.utils.checkpoint with use_reentrant=False): only each layer's input stays saved, at "
                 "about one extra forward of compute.");
  recs.push_back("Train in bf16: torch.autocast(\"cuda\", dtype=torch.bfloat16) halves most saved activations; "
                 "pure bf16 weights also halve weights, gradients and Adam state.");
  recs.push_back("Use a leaner optimizer: AdamW(fused=True) drops the foreach step's transient copy (about 1x "
                 "parameter bytes); 8-bit Adam (bitsandbytes) stores 2 B/param of state instead of 8; "
                 "Adafactor stores factored moments; with several GPUs shard state with FSDP/ZeRO.");
}

// `a` exceeds `b` by more than their printed tolerances allow.
bool exceeds(int64_t a, int64_t a_tol, int64_t b, int64_t b_tol) {
  return a > sat_add(b, sat_add(a_tol, b_tol));
}

}  // namespace

std::vector<std::string> check_consistency(const OomReport& r) {
  std::vector<std::string> out;
  const OomReport::Tolerance& t = r.tolerance;
  const bool legacy_reserved = r.reserved_printed_bytes >= 0;
  const int64_t reserved = legacy_reserved ? r.reserved_printed_bytes : sat_add(r.allocated_bytes, r.reserved_unallocated_bytes);
  const int64_t reserved_tol = legacy_reserved ? t.reserved_printed : sat_add(t.allocated, t.reserved_unallocated);
  const int64_t used = r.total_bytes - r.free_bytes;  // may be negative when free > capacity (flagged below)
  const int64_t used_tol = sat_add(t.total, t.free);
  const std::string edited = "numbers edited by hand or pieced together from different messages";

  if (legacy_reserved && exceeds(r.allocated_bytes, t.allocated, r.reserved_printed_bytes, t.reserved_printed))
    out.push_back("allocated " + format_size(r.allocated_bytes) + " is more than reserved " +
                  format_size(r.reserved_printed_bytes) + ", but every allocated block lies inside a segment " +
                  "PyTorch reserved (allocated <= reserved at any instant): " + edited +
                  ", or memory_allocated() and memory_reserved() read at different moments.");
  if (exceeds(r.free_bytes, t.free, r.total_bytes, t.total))
    out.push_back("free " + format_size(r.free_bytes) + " is more than the capacity " + format_size(r.total_bytes) +
                  ": " + edited + ", or the two read on different devices.");
  else if (exceeds(reserved, reserved_tol, used, used_tol))
    out.push_back("PyTorch reserves " + format_size(reserved) + " but only " + format_size(used) +
                  " of the device is in use (capacity " + format_size(r.total_bytes) + " - free " +
                  format_size(r.free_bytes) + "), and reserved memory is device memory in use: free was read at a "
                  "different moment (memory freed in between, by this or another process), or " + edited + ".");
  if (r.cap_bytes > 0 && exceeds(r.cap_bytes, t.cap, r.total_bytes, t.total))
    out.push_back("the cap " + format_size(r.cap_bytes) + " is more than the capacity " + format_size(r.total_bytes) +
                  ", but set_per_process_memory_fraction takes a fraction of at most 1: " + edited + ".");
  // What the request could use: device free memory, and under a cap what the cap leaves above reserved.
  const int64_t cap_room = r.cap_bytes > 0 ? r.cap_bytes - reserved : std::numeric_limits<int64_t>::max();
  const int64_t cap_room_tol = r.cap_bytes > 0 ? sat_add(t.cap, reserved_tol) : 0;
  if (exceeds(r.free_bytes, t.free, r.requested_bytes, t.requested) &&
      (r.cap_bytes == 0 || exceeds(cap_room, cap_room_tol, r.requested_bytes, t.requested)))
    out.push_back(format_size(r.free_bytes) + " was free, more than the " + format_size(r.requested_bytes) +
                  " requested" + (r.cap_bytes > 0 ? ", and the " + format_size(r.cap_bytes) + " cap left room for it" : ", with no cap in the message") +
                  ", yet the allocation failed; such a message comes from a limit the numbers do not show (a "
                  "torch.cuda.set_per_process_memory_fraction cap, which PyTorch prints as 'X allowed', dropped from "
                  "the paste; an MPS or container memory limit), from other processes that freed memory between the "
                  "failed cudaMalloc and the report, or from " + edited + ".");
  // NVML's figure for this process is read while the allocator is stopped at the failure, so it holds every
  // reserved segment; 2 MiB covers the driver's page size. (NVML's figures for other processes are not
  // compared with cudaMemGetInfo's free memory: on a shared GPU they drift between the two readings.)
  if (r.process_in_use_reported) {
    constexpr int64_t kNvmlSlack = int64_t{2} << 20;
    if (exceeds(reserved, reserved_tol, r.process_in_use_bytes, sat_add(t.process_in_use, kNvmlSlack)))
      out.push_back("NVML says this process uses " + format_size(r.process_in_use_bytes) + ", less than the " +
                    format_size(reserved) + " PyTorch reserves, though the process figure includes every reserved "
                    "segment and the CUDA context: the two were read at different moments, or " + edited + ".");
  }
  return out;
}

namespace {

// Recommendations when the numbers disagree: first get numbers that hold, then what commonly produces the
// disagreement, then the footprint cuts any OOM calls for (their size unknown).
void add_inconsistent_recs(std::vector<std::string>& recs, bool free_covers_request) {
  recs.push_back("Take the numbers at the failure, from one process and one moment: catch torch.OutOfMemoryError "
                 "and print torch.cuda.memory_summary() and torch.cuda.mem_get_info(), and paste the message "
                 "exactly as PyTorch printed it (the whole traceback).");
  if (free_covers_request)
    recs.push_back("Look for a limit below the device's free memory: torch.cuda.set_per_process_memory_fraction "
                   "in your code or a library (the message then says 'X allowed'), an MPS client limit "
                   "(CUDA_MPS_PINNED_DEVICE_MEM_LIMIT), a container or vGPU memory quota.");
  recs.push_back("Look for other processes on the GPU while the job runs: nvidia-smi --query-compute-apps=pid,"
                 "used_memory --format=csv; memory they free between the failure and the report reads as free.");
  add_footprint_recs(recs, 0);
}

}  // namespace

// Decision rules, first match wins. R = requested bytes, U = reserved-but-unallocated, room = what R could
// use (device free, or the cap's headroom when that is smaller), foreign = device memory held outside this
// process.
//   1. fraction_cap: a cap is set, the device had R free, but the cap left less than R.
//      Reason: cudaMalloc would have succeeded; only set_per_process_memory_fraction refused.
//   2. other_processes: the device was short (free < R), without the foreign memory R would fit
//      (min(free + foreign, cap room) >= R), foreign >= U, and foreign >= 10% of what this process reserves.
//      Reason: freeing the GPU of others is the fix that needs no change to this job. Requiring foreign >= U
//      leaves cases where this process's own cache would cover R to rule 3; the 10% floor keeps a few MiB
//      of stray contexts from being blamed when this process filled the device itself.
//   3. fragmentation: U >= R, or (room + U >= R and U >= 10% of reserved).
//      Reason: the allocator had already released every unsplit cached block before raising, so U sits in
//      split segments with live neighbours; if U alone covers R, or U is a large share that would cover the
//      gap, contiguity (not total bytes) is what failed and expandable segments / max_split_size_mb help.
//   4. capacity: everything else; PyTorch's own tensors fill the device or cap, and only a smaller footprint
//      helps.
// Before them, check_consistency: numbers that cannot all hold at one instant make every rule unreliable (a
// free figure above the request would read as "capacity, 0 bytes short"), so the kind is `inconsistent`.

OomDiagnosis classify(const OomReport& r) {
  const Facts f = derive(r);
  OomDiagnosis d;
  d.inconsistencies = check_consistency(r);
  d.consistent = d.inconsistencies.empty();
  const int64_t limit = r.cap_bytes > 0 ? std::min(r.cap_bytes, r.total_bytes) : r.total_bytes;
  const std::string req = format_size(f.request);

  // Facts that hold whatever the verdict, in the order a reader checks them.
  const bool cap_binds = r.cap_bytes > 0 && f.cap_room < r.free_bytes;
  d.reasons.push_back("Request: " + req + " (the segment the allocator tried to create). Available: " +
                      format_size(f.room) + (cap_binds ? " under the cap" : " free on the device") +
                      (f.shortfall > 0 ? "; short by " + format_size(f.shortfall) + "." : "."));
  d.reasons.push_back("PyTorch tensors hold " + format_size(r.allocated_bytes) + " = " +
                      pct(r.allocated_bytes, limit) + " of the " + format_size(limit) +
                      (r.cap_bytes > 0 ? " cap" : " capacity") + "; " + format_size(f.unalloc) +
                      " more is reserved but unallocated (" + pct(f.unalloc, f.reserved) + " of reserved).");
  if (r.cap_bytes > 0)
    d.reasons.push_back("A per-process cap of " + format_size(r.cap_bytes) + " (" +
                        pct(r.cap_bytes, r.total_bytes) + " of " + format_size(r.total_bytes) +
                        ") is set; this process reserves " + format_size(f.reserved) + " of it.");
  // Below 1% of the GPU, foreign memory explains nothing and is usually rounding in the printed sizes.
  if (r.other_process_count > 0 || f.foreign >= r.total_bytes / 100) {
    std::string who;
    if (r.other_process_count > 0)
      who = std::to_string(r.other_process_count) + " other process" + (r.other_process_count > 1 ? "es" : "") +
            " listed with " + format_size(r.other_processes_bytes);
    if (f.foreign > r.other_processes_bytes)
      who += (who.empty() ? "" : ", plus ") + format_size(f.foreign - r.other_processes_bytes) +
             (f.foreign_exact ? " not listed by NVML (other containers, MIG, driver)"
                              : " unaccounted for (estimated: used - reserved - 1 GiB for this process's "
                                "CUDA context; the legacy message does not list processes)");
    d.reasons.push_back("Outside this process: " + format_size(f.foreign) + " (" + pct(f.foreign, r.total_bytes) +
                        " of the GPU): " + who + ".");
  }
  if (f.own_non_pytorch > 0)
    d.reasons.push_back("This process holds " + format_size(f.own_non_pytorch) +
                        " outside the allocator (CUDA context, kernels, cuBLAS/NCCL buffers).");
  if (r.private_pool_bytes > 0)
    d.reasons.push_back(format_size(r.private_pool_bytes) + " sits in CUDA-graph private pools.");

  const bool frag_strong = f.unalloc >= f.request;
  const bool frag_share = f.unalloc > 0 && sat_add(f.room, f.unalloc) >= f.request && f.unalloc >= f.reserved / 10;
  const int64_t room_without_foreign = std::min(sat_add(r.free_bytes, f.foreign), f.cap_room);

  if (!d.consistent) {
    d.kind = OomKind::inconsistent;
    d.verdict = "inconsistent: these numbers cannot all be true at one instant (" +
                std::to_string(d.inconsistencies.size()) + " disagreement" +
                (d.inconsistencies.size() > 1 ? "s" : "") + ", listed below), so they do not say why this " +
                req + " request failed; get the numbers from the failing run itself.";
    add_inconsistent_recs(d.recommendations, r.free_bytes >= f.request);
  } else if (r.cap_bytes > 0 && r.free_bytes >= f.request && f.cap_room < f.request) {
    d.kind = OomKind::fraction_cap;
    const int64_t need = checked_add(f.reserved, f.request, "cap_bytes");
    const int h = fraction_hundredths_for(need, r.total_bytes);
    d.verdict = "fraction_cap: the per-process cap of " + format_size(r.cap_bytes) + " refused a " + req +
                " request while the GPU still had " + format_size(r.free_bytes) + " free.";
    if (h <= 100)
      d.recommendations.push_back(
          "Raise the cap: torch.cuda.set_per_process_memory_fraction(" + fraction_str(h) + ") or more (this "
          "request needs " + format_size(need) + " reserved, " + format_size(need - r.cap_bytes) +
          " above the cap; the run's peak may need more), or drop the call if the cap is only a safety net.");
    else
      d.recommendations.push_back("Raising the cap cannot help: this request alone needs " + format_size(need) +
                                  ", more than the " + format_size(r.total_bytes) + " GPU.");
    if (frag_strong || frag_share) d.recommendations.push_back(alloc_conf_rec(r, f));
    add_footprint_recs(d.recommendations, std::max<int64_t>(0, need - r.cap_bytes));
  } else if (r.free_bytes < f.request && f.foreign > 0 && room_without_foreign >= f.request &&
             f.foreign >= f.unalloc && f.foreign >= f.reserved / 10) {
    d.kind = OomKind::other_processes;
    d.verdict = "other_processes: " + format_size(f.foreign) + " of the GPU is held outside this process; "
                "without it the " + req + " request would fit (only " + format_size(r.free_bytes) + " was free).";
    d.recommendations.push_back(
        "Free the GPU: stop or move the other processes (nvidia-smi --query-compute-apps=pid,used_memory "
        "--format=csv lists them); at least " + format_size(f.shortfall) +
        " must be released for this request, and the run's peak likely needs more.");
    d.recommendations.push_back("Or run on an idle GPU: pick it with CUDA_VISIBLE_DEVICES.");
    d.recommendations.push_back(
        "If the GPU is shared on purpose, give each job a budget with torch.cuda.set_per_process_memory_fraction "
        "so one job cannot starve the others, and size this job to fit its share.");
    if (frag_strong || frag_share) d.recommendations.push_back(alloc_conf_rec(r, f));
    add_footprint_recs(d.recommendations, f.shortfall);
  } else if (frag_strong || frag_share) {
    d.kind = OomKind::fragmentation;
    d.verdict = "fragmentation: " + format_size(f.unalloc) + " is reserved by PyTorch but unallocated" +
                (frag_strong ? " (more than the " + req + " request)" : " (" + pct(f.unalloc, f.reserved) +
                               " of reserved)") +
                ", yet no free block is large enough; the request would fit without fragmentation.";
    d.recommendations.push_back(alloc_conf_rec(r, f));
    d.recommendations.push_back(
        "Keep tensor shapes steady: pad variable sequence lengths or image sizes to a few fixed buckets, so "
        "freed blocks fit the next step's tensors.");
    d.recommendations.push_back(
        "Free references early (del large intermediates, avoid keeping loss tensors or outputs across steps) "
        "so neighbouring blocks can merge.");
    if (f.shortfall > f.unalloc)
      add_footprint_recs(d.recommendations, f.shortfall - f.unalloc);
  } else {
    d.kind = OomKind::capacity;
    d.verdict = "capacity: this run needs more memory than the " + std::string(r.cap_bytes > 0 ? "cap" : "GPU") +
                " provides; PyTorch tensors hold " + format_size(r.allocated_bytes) + " of " + format_size(limit) +
                " (" + pct(r.allocated_bytes, limit) + ") and the " + req + " request " +
                (f.shortfall > 0 ? "was " + format_size(f.shortfall) + " short."
                                 : "took all that was left (the request and the free memory agree within the "
                                   "message's rounding).");
    add_footprint_recs(d.recommendations, f.shortfall);
    if (f.unalloc > 0) d.recommendations.push_back(alloc_conf_rec(r, f));
    if (f.own_non_pytorch > int64_t{3} * kGiB / 2)
      d.recommendations.push_back(
          "This process holds " + format_size(f.own_non_pytorch) +
          " outside PyTorch's allocator: keep CUDA_MODULE_LOADING=LAZY (the default) and check for extra "
          "CUDA streams, NCCL groups or other libraries (cuDNN benchmark workspaces, TensorRT) on this GPU.");
    if (f.foreign > 0 && room_without_foreign >= f.request)
      d.recommendations.push_back("Freeing the " + format_size(f.foreign) +
                                  " held outside this process would also cover this request.");
  }
  return d;
}

}  // namespace memplan
