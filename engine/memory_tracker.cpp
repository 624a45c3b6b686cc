#include "engine/memory_tracker.h"

#include <cassert>

#include "engine/checked.h"

namespace memplan {

std::string_view phase_name(Phase p) {
  switch (p) {
    case Phase::build: return "build";
    case Phase::batch: return "batch";
    case Phase::forward: return "forward";
    case Phase::backward: return "backward";
    case Phase::optimizer: return "optimizer";
    case Phase::zero_grad: return "zero_grad";
    case Phase::prefill: return "prefill";
    case Phase::decode: return "decode";
  }
  return "?";
}

void MemoryTracker::set_row(int32_t block, Row row) {
  Block& b = blocks_[static_cast<size_t>(block)];
  if (b.row == row) return;
  if (block < first_new_block_) old_rows_changed_ = true;
  if (b.live) {
    const int64_t rounded = rounded_of(b.requested);
    ledger_[b.row] -= rounded;
    ledger_[row] += rounded;
  }
  b.row = row;
}

bool MemoryTracker::span_closed(int64_t begin, int64_t end, int32_t first_block) const {
  int64_t allocs = 0, frees = 0;
  for (int64_t i = begin; i < end; ++i) {
    const MemEvent& e = events_[static_cast<size_t>(i)];
    if (e.block < first_block) return false;  // an older block freed
    (e.action == MemEvent::Action::alloc ? allocs : frees) += 1;
  }
  // Each block is freed at most once, so as many frees as allocs, all of the span's blocks, free them all.
  return allocs == frees && allocs == block_count() - first_block;
}

void MemoryTracker::repeat_span(int64_t begin, int64_t end, int32_t first_block) {
  assert(span_closed(begin, end, first_block) && !record_timeline_);
  const int32_t shift = block_count() - first_block;
  const auto n_blocks = static_cast<size_t>(shift);
  blocks_.reserve(blocks_.size() + n_blocks);
  for (size_t i = 0; i < n_blocks; ++i) blocks_.push_back(blocks_[static_cast<size_t>(first_block) + i]);
  events_.reserve(events_.size() + static_cast<size_t>(end - begin));
  for (int64_t i = begin; i < end; ++i) {
    MemEvent e = events_[static_cast<size_t>(i)];
    e.block += shift;
    events_.push_back(e);
  }
}


}  // namespace memplan
