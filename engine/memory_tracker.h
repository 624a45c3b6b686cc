// MemoryTracker: the live set on integer time. Every alloc/free becomes a MemEvent; each live block sits in one
// ledger row (which may change, e.g. an activation becoming saved); the tracker keeps the running ledger and
// the peak with the ledger and location at that instant.
//
// Byte accounting follows torch.cuda.memory_allocated: each block counts its request rounded up to 512 B.
#pragma once
#include <cassert>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/checked.h"
#include "engine/ledger.h"
#include "engine/mem_event.h"

namespace memplan {

enum class Phase : uint8_t { build, batch, forward, backward, optimizer, zero_grad, prefill, decode };
std::string_view phase_name(Phase p);

struct Location {
  int32_t step = 0;          // 1-based training step (0: model build)
  int32_t micro_batch = 0;
  Phase phase = Phase::build;
  int32_t op = -1;           // op index in the Graph, -1 outside ops
  bool recompute = false;    // inside an activation-checkpoint recompute
};

struct PeakInfo {
  int64_t bytes = 0;
  Location where;
  Ledger ledger;
};

class MemoryTracker {
 public:
  // 16 bytes, one per block ever allocated (38,697 in a Llama-2-70B training run): the rounded size is derived
  // from the requested one when needed, not stored.
  struct Block {
    int64_t requested = 0;
    Row row = Row::transient;
    bool live = false;
  };
  // The tracker's two large tables, lent by a caller that replays again and again (EstimateWorkspace): a table
  // the tracker writes into memory it has written before costs no page faults. Only the capacity carries over:
  // the tracker empties both before its first event.
  struct Storage {
    MemEventStream events;
    std::vector<Block> blocks;
  };
  MemoryTracker() = default;
  explicit MemoryTracker(Storage lent) : blocks_(std::move(lent.blocks)), events_(std::move(lent.events)) {
    blocks_.clear();
    events_.clear();
  }
  // The block table back to the lender (the event stream goes with the result: take_events).
  std::vector<Block> take_blocks() { return std::move(blocks_); }

  void reserve(size_t events) {
    events_.reserve(events);
    blocks_.reserve(events / 2);
  }
  int32_t alloc(int64_t bytes, Row row, bool optional = false);  // optional: see MemEvent::optional
  // A kernel's workspace: allocated and freed at once (a transient that can only set the peak).
  void workspace(int64_t bytes, bool optional = false) { free(alloc(bytes, Row::transient, optional)); }
  // Transients alive together, then all freed in allocation order (construction's tensors dropped at once).
  void transients_together(const std::vector<int64_t>& bytes) {
    std::vector<int32_t> blocks;
    blocks.reserve(bytes.size());
    for (int64_t b : bytes) blocks.push_back(alloc(b, Row::transient));
    for (int32_t b : blocks) free(b);
  }
  void free(int32_t block);
  void set_row(int32_t block, Row row);
  Row row_of(int32_t block) const { return blocks_[static_cast<size_t>(block)].row; }
  bool live(int32_t block) const { return blocks_[static_cast<size_t>(block)].live; }

  int64_t current_bytes() const { return current_; }
  const Ledger& ledger() const { return ledger_; }
  const MemEventStream& events() const { return events_; }
  int64_t event_count() const { return static_cast<int64_t>(events_.size()); }
  MemEventStream take_events() { return std::move(events_); }

  Location here;                   // callers update the location; events and peaks are tagged with it
  // Peak since the last reset_window() (phase peaks) and over the whole run.
  void reset_window() { window_peak_ = current_; }
  int64_t window_peak() const { return window_peak_; }
  const PeakInfo& peak() const { return peak_; }
  // A second, independent window for callers measuring a span inside a phase (e.g. one layer's forward).
  void reset_sub_window() { sub_window_peak_ = current_; }
  int64_t sub_window_peak() const { return sub_window_peak_; }
  void reset_peak() { peak_ = PeakInfo{current_, here, ledger_}; }
  // Per-event bytes after the event, for timelines (off by default).
  void record_timeline(bool on) { record_timeline_ = on; }
  const std::vector<int64_t>& timeline() const { return timeline_; }
  const std::vector<Location>& timeline_where() const { return timeline_where_; }
  const std::vector<Ledger>& timeline_ledgers() const { return timeline_ledgers_; }

  // --- Repeating a span of events (step_replay.cpp: a training step that repeats the previous one) ---
  int32_t block_count() const { return static_cast<int32_t>(blocks_.size()); }
  // From here on, blocks allocated before this point are "old": old_rows_changed() says whether one of them
  // has changed ledger row since.
  void mark_old_blocks() {
    first_new_block_ = block_count();
    old_rows_changed_ = false;
  }
  bool old_rows_changed() const { return old_rows_changed_; }
  // Whether events [begin, end) freed every block they allocated (ids >= first_block) and no older block: the
  // span left the live set as it found it.
  bool span_closed(int64_t begin, int64_t end, int32_t first_block) const;
  // Appends events [begin, end) of a closed span again, its blocks renamed to fresh ids in the same order:
  // what replaying the span from the same state emits. The live set, the ledger and the peak windows end as
  // they were; the caller sets `here` and the peak (set_peak).
  void repeat_span(int64_t begin, int64_t end, int32_t first_block);
  void set_peak(const PeakInfo& p) { peak_ = p; }

 private:
  // torch.cuda.memory_allocated's bytes of a request: rounded up to 512 B, at least 512 (an overflow is caught
  // when the block is allocated, so a block's rounding cannot overflow later).
  static int64_t rounded_of(int64_t requested) { return round_up(requested > 0 ? requested : 1, 512, "allocation bytes"); }
  void after_event();

  std::vector<Block> blocks_;
  MemEventStream events_;
  Ledger ledger_;
  int64_t current_ = 0;
  int64_t window_peak_ = 0;
  int64_t sub_window_peak_ = 0;
  PeakInfo peak_;
  bool record_timeline_ = false;
  std::vector<int64_t> timeline_;
  std::vector<Location> timeline_where_;
  std::vector<Ledger> timeline_ledgers_;
  int32_t first_new_block_ = 0;
  bool old_rows_changed_ = false;
};

// Inline: the step replay makes one call per event (with -fPIC, as the Python module builds the engine, an
// out-of-line member is never inlined, even into its own file).
inline void MemoryTracker::after_event() {
  if (current_ > window_peak_) window_peak_ = current_;
  if (current_ > sub_window_peak_) sub_window_peak_ = current_;
  if (current_ > peak_.bytes) peak_ = PeakInfo{current_, here, ledger_};
  if (record_timeline_) {
    timeline_.push_back(current_);
    timeline_where_.push_back(here);
    timeline_ledgers_.push_back(ledger_);
  }
}

inline int32_t MemoryTracker::alloc(int64_t bytes, Row row, bool optional) {
  const auto id = static_cast<int32_t>(blocks_.size());
  const int64_t rounded = rounded_of(bytes);
  blocks_.push_back({bytes, row, true});
  events_.emplace_back(MemEvent::Action::alloc, id, bytes, 0, optional);
  current_ = checked_add(current_, rounded, "live bytes");
  ledger_[row] += rounded;  // every row is a part of current_, so it cannot overflow when current_ did not
  after_event();
  return id;
}

inline void MemoryTracker::free(int32_t block) {
  Block& b = blocks_[static_cast<size_t>(block)];
  assert(b.live && "double free in replay");
  b.live = false;
  events_.emplace_back(MemEvent::Action::free, block, b.requested);
  const int64_t rounded = rounded_of(b.requested);
  current_ -= rounded;
  ledger_[b.row] -= rounded;
  after_event();
}

}  // namespace memplan
