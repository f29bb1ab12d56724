// Stages: work done in pieces, for a caller that must keep drawing frames (the
// page's prepare_pt2e, convert_pt2e and run_decompositions on a 10k-node graph).
// Each stage is a function doing one bounded piece (a few hundred nodes) and
// saying whether the stage is over; step() runs pieces, stage after stage,
// until a deadline passes. Stepped to the end, it is the one-call pass.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "util/status.h"

namespace pt2lab {

class Stages {
public:
    using Clock = std::chrono::steady_clock;
    // One piece of a stage: true when the stage is over, an error ends them all.
    // The deadline is for a stage that steps work of its own (a pass's Stages).
    using Piece = std::function<Result<bool>(Clock::time_point deadline)>;

    // `describe`, when given, says what the stage does now (a nested pass's what()).
    void add(std::string what, Piece piece, std::function<std::string()> describe = {}) {
        stages_.push_back({std::move(what), std::move(piece), std::move(describe)});
    }

    // Pieces until `deadline` (at least one) or until every stage is over (true).
    Result<bool> step(Clock::time_point deadline) {
        do {
            if (done()) return true;
            auto r = stages_[at_].piece(deadline);
            if (!r.ok()) return r.error();
            if (r.value()) {
                ++at_;
                work_done = work_total = 0;
                work_unit = "node";
            }
        } while (Clock::now() < deadline);
        return done();
    }
    bool done() const { return at_ >= stages_.size(); }

    // What the stage now does, with its count when it keeps one ("place
    // observers: node 300 of 10000"); a stage's piece updates the counts.
    std::string what() const {
        if (done()) return "done";
        if (stages_[at_].describe) return stages_[at_].describe();
        std::string s = stages_[at_].what;
        if (work_total > 0)
            s += std::string(": ") + work_unit + " " + std::to_string(work_done) + " of " +
                 std::to_string(work_total);
        return s;
    }
    size_t stage() const { return at_; }
    size_t count() const { return stages_.size(); }
    uint64_t work_done = 0, work_total = 0; // within the stage now
    const char* work_unit = "node";

private:
    struct Stage {
        std::string what;
        Piece piece;
        std::function<std::string()> describe;
    };
    std::vector<Stage> stages_;
    size_t at_ = 0;
};

// How big a piece is: how many nodes it handles, how many tensor elements it
// computes (weights folded or quantized): a few milliseconds of work in
// WebAssembly. A test makes them small (ScopedPieceSize) to cut its small graphs
// into many pieces, as the page cuts a big one.
struct PieceSize {
    size_t nodes = 256;
    int64_t elements = int64_t{1} << 20;
};
inline PieceSize& piece_size() {
    static PieceSize size;
    return size;
}
class ScopedPieceSize {
public:
    explicit ScopedPieceSize(PieceSize size) : saved_(piece_size()) { piece_size() = size; }
    ~ScopedPieceSize() { piece_size() = saved_; }
    ScopedPieceSize(const ScopedPieceSize&) = delete;
    ScopedPieceSize& operator=(const ScopedPieceSize&) = delete;

private:
    PieceSize saved_;
};

} // namespace pt2lab
