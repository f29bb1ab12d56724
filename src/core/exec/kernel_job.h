// A heavy kernel's work as a list of units run in order, so that a run can
// pause inside one node and resume it on a later call (Execution::advance).
// Not a scheduler: the kernel builds the units, the interpreter runs them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "exec/tensor.h"

namespace pt2lab {

// The units of one kernel call. A kernel that can pause makes a KernelJob after
// its checks, its result and its scratch allocated (and charged to the budget):
// the units only compute, so they cannot fail. Each unit runs once, in order;
// running them all in one go is the kernel's one-call form, so a paused and
// resumed call writes the same bits as an uninterrupted one. Dropping a job
// half-way frees everything it holds.
class KernelJob {
public:
    using Unit = std::function<void(int64_t)>;
    // Appends a stage of `count` units, fn(0) .. fn(count - 1), after the earlier ones.
    // fn keeps what it reads alive (captured shared_ptrs) or reads what `result`
    // and `keep` hold.
    void then(int64_t count, Unit fn);
    int64_t units() const { return total_; }
    int64_t units_done() const { return done_; }
    bool done() const { return done_ == total_; }
    // Runs the next unit (not done() before).
    void run_one();
    // Runs every unit left.
    void run_all();

    // The kernel's return value: its tensors are allocated when the job is made
    // and complete once done().
    Value result;
    // Inputs and scratch the units read, kept for the job's lifetime.
    std::vector<std::shared_ptr<const void>> keep;

private:
    struct Stage {
        int64_t count;
        Unit fn;
    };
    std::vector<Stage> stages_;
    size_t stage_ = 0;
    int64_t in_stage_ = 0, done_ = 0, total_ = 0;
};

// How much work (multiply-adds, element visits) one unit should hold: about
// 0.05 ms of the fast kernels and 0.5 ms of the reference ones natively, so
// the interpreter's clock check after each unit costs nothing measurable and
// no unit comes near a frame.
constexpr uint64_t kUnitWork = uint64_t(1) << 19;

// How many of `items` items of `work_per_item` each go in one unit of about
// `unit_work` (KernelOptions::unit_work), at least 1.
int64_t items_per_unit(uint64_t unit_work, uint64_t work_per_item, int64_t items);
// The number of units of `per` items each that cover `items` items.
inline int64_t unit_count(int64_t items, int64_t per) {
    return items <= 0 ? 0 : (items + per - 1) / per;
}

// Appends a stage over items 0 .. items-1, `per` at a time: fn(begin, end).
void then_items(KernelJob& job, int64_t items, int64_t per,
                std::function<void(int64_t, int64_t)> fn);

} // namespace pt2lab
