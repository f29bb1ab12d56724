// KernelJob: a kernel's units, run one at a time in order.
#include "exec/kernel_job.h"

#include <algorithm>

#include "exec/kernels.h"
#include "util/check.h"

namespace pt2lab {

void KernelJob::then(int64_t count, Unit fn) {
    if (count <= 0) return;
    stages_.push_back({count, std::move(fn)});
    total_ += count;
}

void KernelJob::run_one() {
    PT2LAB_CHECK(!done());
    while (in_stage_ == stages_[stage_].count) ++stage_, in_stage_ = 0;
    stages_[stage_].fn(in_stage_++);
    ++done_;
}

void KernelJob::run_all() {
    while (!done()) run_one();
}

int64_t items_per_unit(uint64_t unit_work, uint64_t work_per_item, int64_t items) {
    const uint64_t w = std::max<uint64_t>(work_per_item, 1);
    const uint64_t per = std::max<uint64_t>(unit_work / w, 1);
    return static_cast<int64_t>(
        std::min<uint64_t>(per, static_cast<uint64_t>(std::max<int64_t>(items, 1))));
}

Result<Value> job_value(Result<std::unique_ptr<KernelJob>> job) {
    if (!job.ok()) return job.error();
    job.value()->run_all();
    return std::move(job.value()->result);
}

Result<Tensor> job_tensor(Result<std::unique_ptr<KernelJob>> job) {
    auto v = job_value(std::move(job));
    if (!v.ok()) return v.error();
    return std::move(*v.value().tensor);
}

void then_items(KernelJob& job, int64_t items, int64_t per,
                std::function<void(int64_t, int64_t)> fn) {
    job.then(unit_count(items, per), [items, per, fn = std::move(fn)](int64_t u) {
        const int64_t begin = u * per;
        fn(begin, std::min(items, begin + per));
    });
}

} // namespace pt2lab
