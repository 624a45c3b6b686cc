// StepRepeat: see step_repeat.h for the two cases and what a derived step contributes.
//
// Stages at each step start: (1) the layout is taken (when a later step start will compare with it or this
// one compares with the previous); (2) with the previous step start's layout, the two are matched (`same`, or
// `grown` with step k-1's requests checked against the new segments); (3) every remaining step's events are
// matched with its predecessor's under the renaming of block ids the layouts give, carried from step to step;
// (4) only when all of that holds are the remaining steps' contributions added and the model's live blocks
// renamed to the stream's final ids. Anything that does not hold leaves the replay to go on as if never asked.
#include "engine/alloc/step_repeat.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "engine/errors.h"

namespace memplan {

namespace {

using Layout = CachingAllocator::Layout;
constexpr int64_t kNone = std::numeric_limits<int64_t>::max();

std::vector<int32_t> users_of(const Layout& l) {
  std::vector<int32_t> u;
  for (const Layout::Blk& b : l.blocks)
    if (b.allocated) u.push_back(b.user);
  return u;
}

bool same_block(const Layout::Blk& a, const Layout::Blk& b) {  // user ids aside
  return a.addr == b.addr && a.size == b.size && a.stream == b.stream && a.allocated == b.allocated &&
         a.mapped == b.mapped;
}

// The first `n_segs` segments (and their blocks) of `a` and `b` are equal, user ids aside.
bool same_prefix(const Layout& a, const Layout& b, size_t n_segs, size_t n_blocks) {
  if (a.segments.size() < n_segs || b.segments.size() < n_segs || a.blocks.size() < n_blocks ||
      b.blocks.size() < n_blocks)
    return false;
  if (!std::equal(a.segments.begin(), a.segments.begin() + static_cast<std::ptrdiff_t>(n_segs), b.segments.begin()))
    return false;
  for (size_t i = 0; i < n_blocks; ++i)
    if (!same_block(a.blocks[i], b.blocks[i])) return false;
  return true;
}

bool same_layout(const Layout& a, const Layout& b) {
  return a.segments.size() == b.segments.size() && a.blocks.size() == b.blocks.size() &&
         same_prefix(a, b, a.segments.size(), a.blocks.size()) && a.va == b.va && a.next_va == b.next_va &&
         a.reserved_bytes == b.reserved_bytes && a.allocated_bytes == b.allocated_bytes;
}

// `after` is `before` plus segments appended in arena order, each one whole free mapped block.
bool grown_layout(const Layout& before, const Layout& after) {
  if (!same_prefix(before, after, before.segments.size(), before.blocks.size())) return false;
  int64_t added = 0;
  for (size_t s = before.segments.size(), b = before.blocks.size(); s < after.segments.size(); ++s, ++b) {
    const Layout::Seg& seg = after.segments[s];
    if (seg.expandable || seg.num_blocks != 1 || after.blocks[b].allocated || !after.blocks[b].mapped) return false;
    added += seg.mapped;
  }
  return after.reserved_bytes == before.reserved_bytes + added && after.allocated_bytes == before.allocated_bytes;
}

// The `grown` case: step k meets the new segments (after.segments from `first_new` on) in its cache from its
// start. Replays step k-1's requests (`traces`) against them: each must be served as in step k-1, i.e. no new
// segment not yet taken may precede, in best-fit order (size, address), the block a request took from the
// cache; a request that cudaMalloc'd a segment must find exactly that segment first (before the cache's own
// lower bound, which get_free_block refused or which did not exist) and be accepted by get_free_block's
// oversize rules.
bool new_segments_unseen(const Layout& after, size_t first_new, const std::vector<StepRepeat::Trace>& traces,
                         const std::vector<std::pair<int64_t, int64_t>>& trace_segments, int64_t max_split_bytes) {
  struct Pool {
    bool small;
    int32_t stream;
    std::vector<std::pair<int64_t, int64_t>> unused;  // (size, address), ascending
  };
  std::vector<Pool> pools;
  auto find = [&](bool small, int32_t stream) -> Pool* {
    for (Pool& p : pools)
      if (p.small == small && p.stream == stream) return &p;
    return nullptr;
  };
  size_t new_count = 0;
  for (size_t s = first_new; s < after.segments.size(); ++s, ++new_count) {
    const Layout::Seg& seg = after.segments[s];
    Pool* p = find(seg.small, seg.stream);
    if (!p) p = &pools.emplace_back(Pool{seg.small, seg.stream, {}});
    p->unused.emplace_back(seg.va_size, seg.addr);
  }
  for (Pool& p : pools) std::sort(p.unused.begin(), p.unused.end());
  const int64_t max_split = max_split_bytes == 0 ? kNone : max_split_bytes;
  size_t taken = 0, next_segment = 0;
  for (const StepRepeat::Trace& t : traces) {
    const std::pair<int64_t, int64_t> seg = t.new_segment ? trace_segments[next_segment++] : std::pair<int64_t, int64_t>{};
    Pool* p = find(t.small, t.stream);
    const bool none = !p || p->unused.empty();
    if (none && !t.new_segment) continue;
    if (none) return false;
    const auto it = std::lower_bound(p->unused.begin(), p->unused.end(), std::pair{t.size, std::numeric_limits<int64_t>::min()});
    const std::pair<int64_t, int64_t> cand{t.cand_size, t.cand_addr};
    if (!t.new_segment) {
      if (it != p->unused.end() && *it < cand) return false;
      continue;
    }
    const int64_t seg_size = seg.first;
    if (it == p->unused.end() || *it != seg || !(*it < cand)) return false;
    if (t.size < max_split && seg_size >= max_split) return false;
    if (t.size >= max_split && seg_size >= t.size + kAllocLargeBufferBytes) return false;
    p->unused.erase(it);
    ++taken;
  }
  return taken == new_count;
}

// Whether events [b, b + len) repeat [a, a + len) with block ids renamed: the same actions, alloc sizes,
// streams and optional flags; `ua` / `ub` are the ids of the live blocks at a's / b's start, in layout order
// (position p of one is position p of the other), and an id allocated in [a, ...) maps to the id its alloc
// has in [b, ...). [b, b + len) must also be a valid stream from `ub` (no alloc of a live id, no free of a dead
// one), so the replay it replaces would not have refused it. On success `next` holds the ids live at
// b + len, in layout order.
bool events_repeat(const MemEventStream& ev, int64_t a, int64_t b, int64_t len, const std::vector<int32_t>& ua,
                   const std::vector<int32_t>& ub, std::vector<int32_t>& next) {
  int32_t max_a = -1, max_b = -1;
  for (int32_t u : ua) max_a = std::max(max_a, u);
  for (int32_t u : ub) max_b = std::max(max_b, u);
  for (int64_t t = 0; t < len; ++t) {
    max_a = std::max(max_a, ev[static_cast<size_t>(a + t)].block);
    max_b = std::max(max_b, ev[static_cast<size_t>(b + t)].block);
  }
  std::vector<int32_t> to(static_cast<size_t>(max_a) + 1, -1);  // id in [a, ...) -> id in [b, ...)
  std::vector<bool> live(static_cast<size_t>(max_b) + 1, false);  // ids live in [b, ...)
  for (size_t p = 0; p < ua.size(); ++p) to[static_cast<size_t>(ua[p])] = ub[p];
  for (int32_t u : ub) live[static_cast<size_t>(u)] = true;
  for (int64_t t = 0; t < len; ++t) {
    const MemEvent& x = ev[static_cast<size_t>(a + t)];
    const MemEvent& y = ev[static_cast<size_t>(b + t)];
    if (x.action != y.action || x.block < 0 || y.block < 0) return false;
    const auto yb = static_cast<size_t>(y.block);
    if (x.action == MemEvent::Action::alloc) {
      if (x.size_bytes != y.size_bytes || x.stream != y.stream || x.optional != y.optional || live[yb]) return false;
      to[static_cast<size_t>(x.block)] = y.block;
      live[yb] = true;
    } else {
      if (to[static_cast<size_t>(x.block)] != y.block || !live[yb]) return false;
      live[yb] = false;
    }
  }
  next.resize(ub.size());
  for (size_t p = 0; p < ub.size(); ++p) {
    const auto u = static_cast<size_t>(ub[p]);
    if (u >= to.size() || to[u] < 0) return false;
    next[p] = to[u];
  }
  return true;
}

}  // namespace

StepRepeat::StepRepeat(const MemEventStream& events, const AllocatorReplayOptions& options)
    : events_(events), options_(options), begins_(options.step_begin_events) {
  if (options.lent) {
    traces_ = std::move(options.lent->traces);
    traces_.clear();
  }
  const auto end = static_cast<int64_t>(events.size());
  for (size_t i = 0; i < begins_.size(); ++i) {
    const int64_t b = begins_[i];
    if (b < 0 || b > end || (i > 0 && b <= begins_[i - 1]))
      throw InputError("step_begin_events", std::to_string(b), "must be ascending event indices within the stream");
  }
  // Step i (from its start to the stream's end) can be derived only if it and every later step are as long as
  // step i-1, the window of window_peak_allocated covers step i-1 and no sample falls inside the derived steps.
  attempt_.assign(begins_.size(), false);
  for (size_t i = 1; i < begins_.size(); ++i) {
    const int64_t len = begins_[i] - begins_[i - 1];
    bool ok = options.window_begin_event <= begins_[i - 1] && end - begins_.back() == len;
    for (size_t j = i + 1; ok && j < begins_.size(); ++j) ok = begins_[j] - begins_[j - 1] == len;
    for (int64_t n : options.allocated_after_events) ok = ok && !(n > begins_[i] && n < end);
    attempt_[i] = ok;
  }
}

void StepRepeat::give_back_storage() {
  if (options_.lent) options_.lent->traces = std::move(traces_);
}

bool StepRepeat::at_step_start(CachingAllocator& model, AllocatorStats& s) {
  const size_t index = next_++;
  const bool attempt = attempt_[index] && have_prev_;
  const bool compare_later = next_ < begins_.size() && attempt_[next_];
  if (!attempt && !compare_later) {
    have_prev_ = tracing_ = false;
    return false;
  }
  Mark cur;
  cur.event = begins_[index];
  cur.retries = model.num_alloc_retries();
  cur.device_allocs = model.num_device_allocs();
  cur.skipped = s.num_skipped_workspaces;
  cur.curve = s.reserved_curve_bytes.size();
  cur.layout = model.layout();
  cur.users = users_of(cur.layout);
  if (attempt && derive_tail(model, s, cur)) {
    next_ = begins_.size();
    return true;
  }
  have_prev_ = tracing_ = false;
  if (!compare_later) return false;
  prev_ = std::move(cur);
  have_prev_ = true;
  tracing_ = !model.options().expandable_segments;
  traces_.clear();
  trace_segments_.clear();
  if (tracing_) traces_.reserve(static_cast<size_t>(begins_[next_] - begins_[index]));  // at most one per event
  return false;
}

bool StepRepeat::derive_tail(CachingAllocator& model, AllocatorStats& s, const Mark& cur) {
  const int64_t len = cur.event - prev_.event;
  const auto n_steps = (static_cast<int64_t>(events_.size()) - cur.event) / len;  // this step and the later ones
  const bool same = same_layout(prev_.layout, cur.layout);
  if (!same && !(tracing_ && grown_layout(prev_.layout, cur.layout) &&
                 new_segments_unseen(cur.layout, prev_.layout.segments.size(), traces_, trace_segments_,
                                     model.options().max_split_size_bytes)))
    return false;
  std::vector<int32_t> ua = prev_.users, ub = cur.users, next;
  for (int64_t j = 0; j < n_steps; ++j) {
    if (!events_repeat(events_, cur.event + (j - 1) * len, cur.event + j * len, len, ua, ub, next)) return false;
    ua = std::move(ub);
    ub = std::move(next);
  }

  const size_t curve_len = cur.curve - prev_.curve;
  for (int64_t j = 0; j < n_steps; ++j) {
    if (same) {
      model.count_derived(cur.retries - prev_.retries, cur.device_allocs - prev_.device_allocs);
      s.num_skipped_workspaces += cur.skipped - prev_.skipped;
      std::vector<int64_t>& curve = s.reserved_curve_bytes;
      curve.reserve(curve.size() + curve_len);
      for (size_t t = 0; t < curve_len; ++t) curve.push_back(curve[prev_.curve + t]);
    } else if (curve_len > 0) {
      s.reserved_curve_bytes.insert(s.reserved_curve_bytes.end(), curve_len, cur.layout.reserved_bytes);
    }
  }
  s.derived_steps += n_steps;
  model.rename_live_blocks(ub);
  return true;
}

}  // namespace memplan
