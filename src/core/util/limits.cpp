// Budgets for memory and work, and the messages when one runs out.
#include "util/limits.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "util/checked.h"

namespace pt2lab {

namespace {

uint64_t auto_rule(uint64_t base, uint64_t per_byte, uint64_t cap, uint64_t file_size) {
    auto grown = checked_mul_u64(per_byte, file_size);
    if (!grown) return cap;
    auto total = checked_add_u64(base, *grown);
    return total ? std::min(*total, cap) : cap;
}

std::string sizes_str(const std::vector<int64_t>& sizes) {
    std::string s = "[";
    for (size_t k = 0; k < sizes.size(); ++k) s += (k ? ", " : "") + std::to_string(sizes[k]);
    return s + "]";
}

std::string work_str(uint64_t n) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", static_cast<double>(n));
    return buf;
}

} // namespace

uint64_t Limits::file_budget(uint64_t file_size) const {
    if (file_bytes) return file_bytes;
    return auto_rule(kBaseBytes, kBytesPerFileByte, kMaxAutoBytes, file_size);
}

uint64_t Limits::run_budget(uint64_t file_size) const {
    if (run_bytes) return run_bytes;
    return auto_rule(kBaseBytes, kBytesPerFileByte, kMaxAutoBytes, file_size);
}

uint64_t Limits::work_budget(uint64_t file_size) const {
    if (run_work) return run_work;
    return auto_rule(kBaseWork, kWorkPerFileByte, kMaxAutoWork, file_size);
}

Status Limits::set(const std::string& nv) {
    size_t eq = nv.find('=');
    std::string name = nv.substr(0, eq);
    const char* known = "tensor-mb, file-mb, run-mb or run-gmacs";
    if (eq == std::string::npos || eq + 1 >= nv.size())
        return make_error("--limit", "expected NAME=VALUE with NAME one of " + std::string(known) +
                                         ", got '" + nv + "'");
    const std::string value = nv.substr(eq + 1);
    char* end = nullptr;
    unsigned long long v = std::strtoull(value.c_str(), &end, 10);
    if (*end || value[0] == '-' || v == 0 || v > (1ull << 30))
        return make_error("--limit",
                          name + " needs a whole number from 1 to 1073741824, got '" + value + "'");
    if (name == "tensor-mb")
        tensor_bytes = v * kMiB;
    else if (name == "file-mb")
        file_bytes = v * kMiB;
    else if (name == "run-mb")
        run_bytes = v * kMiB;
    else if (name == "run-gmacs")
        run_work = v * 1000000000ull;
    else
        return make_error("--limit", "unknown limit '" + name + "' (one of " + known + ")");
    return {};
}

std::string human_bytes(uint64_t n) {
    char buf[48];
    if (n < 1024)
        std::snprintf(buf, sizeof buf, "%llu byte%s", static_cast<unsigned long long>(n),
                      n == 1 ? "" : "s");
    else if (n < Limits::kMiB)
        std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(n) / 1024.0);
    else if (n < (uint64_t(1) << 30))
        std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(n) / double(Limits::kMiB));
    else
        std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(n) / double(1u << 30));
    return buf;
}

Budget::Budget(const Limits& limits, Scope scope, uint64_t file_size)
    : limits_(limits), scope_(scope), file_size_(file_size),
      limit_(scope == Scope::File ? limits.file_budget(file_size) : limits.run_budget(file_size)),
      work_limit_(limits.work_budget(file_size)) {
}

Error Budget::over(const std::string& what, const std::string& message) const {
    return make_error(what, message);
}

Status Budget::tensor(const std::vector<int64_t>& sizes, size_t itemsize, const std::string& what) {
    auto n = checked_nbytes(sizes, itemsize);
    if (!n) {
        Error e = over(what, "sizes " + sizes_str(sizes) +
                                 (checked_numel(sizes) ? " need more bytes than fit in 64 bits"
                                                       : " are negative or hold more elements "
                                                         "than fit in 64 bits"));
        e.hint = "no real tensor has this shape; the file is damaged or was made by hand";
        return e;
    }
    if (*n > limits_.tensor_bytes) {
        Error e =
            over(what, sizes_str(sizes) + " x " + std::to_string(itemsize) + " bytes needs " +
                           human_bytes(*n) + ", more than the " +
                           human_bytes(limits_.tensor_bytes) + " pt2lab accepts for one tensor");
        e.hint = "the limit keeps the page within the browser's memory; the CLI's --limit "
                 "tensor-mb=N raises it";
        return e;
    }
    return bytes(*n, what);
}

Status Budget::bytes(uint64_t n, const std::string& what) {
    auto total = checked_add_u64(used_, n);
    if (total && *total <= limit_) {
        used_ = *total;
        return {};
    }
    const bool file = scope_ == Scope::File;
    std::string rule = (file ? limits_.file_bytes : limits_.run_bytes)
                           ? "set with --limit"
                           : "the budget for a " + human_bytes(file_size_) +
                                 " file: 64 MiB + 16 x its size, at most 512 MiB";
    Error e =
        over(what, std::string(file ? "loading this file" : "this run") + " would need " +
                       (total ? human_bytes(*total) : std::string("more than 2^64 bytes")) +
                       (file ? " in all (" : " at once (") + human_bytes(n) +
                       " more for this), more than its " + human_bytes(limit_) + " (" + rule + ")");
    e.hint = std::string("budgets keep a small file from taking the page's memory; the CLI's "
                         "--limit ") +
             (file ? "file-mb" : "run-mb") + "=N raises it";
    return e;
}

Status Budget::work(uint64_t n, const std::string& what) {
    auto total = checked_add_u64(work_used_, n);
    if (total && *total <= work_limit_) {
        work_used_ = *total;
        return {};
    }
    std::string rule = limits_.run_work ? "set with --limit"
                                        : "the budget for a " + human_bytes(file_size_) +
                                              " file: 1e9 + 256 x its size, at most 2e10";
    Error e = over(what, "this run would need " +
                             (total ? work_str(*total) : std::string("more than 1.8e19")) +
                             " multiply-adds in all, more than its " + work_str(work_limit_) +
                             " (" + rule + ")");
    e.hint = "the budget keeps a run from freezing the page; the CLI's --limit run-gmacs=N "
             "raises it";
    return e;
}

} // namespace pt2lab
