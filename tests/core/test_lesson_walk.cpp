// Walks every step of every lesson in both languages without a UI, the way a
// learner does (press the button, then Next), and checks that what each step
// claims (lint, parity, torch's errors, added / removed nodes: evaluated by
// lesson_check.h's check_step_expect, as `pt2lab lesson check` does;
// highlights) holds on the live graphs; the graphs themselves are compared with real
// PyTorch in test_lesson_golden.cpp. Also: deep links replay to the same
// state, answers are checked, languages switch in place.
#include <catch2/catch.hpp>

#include <algorithm>

#include "lesson/catalog.h"
#include "lesson/lesson_check.h"
#include "lesson/runner.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;

namespace {

const LessonCatalog& catalog() {
    static LessonCatalog c = [] {
        auto r = load_lesson_catalog(source_path("assets/lessons"));
        INFO((r.ok() ? "" : r.error().str()));
        REQUIRE(r.ok());
        return r.take();
    }();
    return c;
}

std::unique_ptr<LessonRunner> open_runner(const Lesson& l) {
    auto r = LessonRunner::open(l, LessonRunner::files_under(PT2LAB_SOURCE_DIR));
    INFO(l.file << ": " << (r.ok() ? "" : r.error().str()));
    REQUIRE(r.ok());
    return r.take();
}

// Everything a step's graphs show, to compare two ways of reaching a step.
std::string snapshot(const LessonRunner& r) {
    std::string out;
    for (const LessonGraph& g : r.lesson().graphs) {
        const Workspace* w = r.workspace(g.key);
        out += "== " + g.key + "\n" + graph_str(w->graph(GraphView::Module)) +
               w->code(GraphView::Module).text;
        if (w->has_program()) out += graph_str(w->graph(GraphView::Program));
        for (const auto& [fqn, t] : w->state().tensors) {
            if (fqn.find("running") == std::string::npos &&
                fqn.find("num_batches") == std::string::npos)
                continue;
            out += fqn;
            for (int64_t i = 0; i < t->numel(); ++i) out += " " + std::to_string(t->get(i));
            out += "\n";
        }
        for (const auto& [name, obs] : w->state().observers)
            out += name + " " + std::to_string(obs->min_val()) + " " +
                   std::to_string(obs->max_val()) + "\n";
    }
    return out;
}

// Every `expect` claim of the step holds (lesson_check.h evaluates them, as
// pt2lab lesson check does); returns how many there were.
int check_claims(const LessonRunner& r, const LessonStep& st, const LessonStepReport& rep) {
    std::vector<ExpectOutcome> outcomes = check_step_expect(r, st, rep);
    for (const ExpectOutcome& o : outcomes) {
        INFO("expect " << o.name << ": claimed " << o.expected << ", got " << o.actual << " "
                       << o.detail);
        CHECK(o.holds);
    }
    return static_cast<int>(outcomes.size());
}

} // namespace

TEST_CASE("every step of every lesson runs and shows what its text claims", "[lesson]") {
    int steps = 0, actions = 0, expectations = 0;
    for (const auto& entry : catalog().entries) {
        for (const auto& [lang, lesson] : entry.by_lang) {
            auto r = open_runner(lesson);
            for (int k = 1; k <= r->step_count(); ++k) {
                REQUIRE(r->go_to(k).ok());
                const LessonStep& st = r->current();
                INFO(lesson.file << " step " << k << " (" << st.title << ")");
                CHECK(r->deep_link() == "#" + lesson.id + "/" + std::to_string(k));
                if (!st.actions.empty()) {
                    auto rep = r->perform();
                    INFO((rep.ok() ? "" : rep.error().str()));
                    REQUIRE(rep.ok());
                    actions += static_cast<int>(st.actions.size());
                    const LessonStepReport& sr = rep.value();
                    CHECK(sr.added_ids.size() == sr.diff.added.size());
                    CHECK(sr.removed_ids.size() == sr.diff.removed.size());
                    expectations += check_claims(*r, st, sr);
                    CHECK_FALSE(r->perform().ok()); // a button runs once per visit
                } else {
                    CHECK_FALSE(r->perform().ok());
                    // a step without actions: its claims (lint) on the graph as it stands
                    LessonStepReport none;
                    none.step = k;
                    expectations += check_claims(*r, st, none);
                }
                // every highlight and selection names a node of the graph shown
                std::vector<uint32_t> ids = r->highlight_ids();
                CHECK(ids.size() == st.highlight.size());
                if (!st.select.empty()) CHECK(r->selected_id() != 0);
                for (const auto& c : st.compare) CHECK(r->workspace(c) != nullptr);
                // the check: the right option says so, the others do not
                for (int o = 0; o < static_cast<int>(st.check.options.size()); ++o) {
                    LessonCheckResult res = r->check_answer(o);
                    CHECK(res.correct == (o == st.check.answer));
                    CHECK(res.feedback == st.check.options[static_cast<size_t>(o)].feedback);
                }
                CHECK_FALSE(r->check_answer(-1).correct);
                ++steps;
            }
        }
    }
    CHECK(steps >= 2 * 30);
    CHECK(actions >= 2 * 20);
    CHECK(expectations >= 2 * 40);
}

TEST_CASE("a deep link replays the exact state; going back replays from the start", "[lesson]") {
    for (const auto& entry : catalog().entries) {
        const Lesson& l = *catalog().find(entry.id, "zh-TW");
        auto walked = open_runner(l);
        for (int k = 1; k <= walked->step_count(); ++k) {
            INFO(l.file << " step " << k);
            REQUIRE(walked->go_to(k).ok());
            auto linked = open_runner(l);
            std::string id;
            int step = 0;
            REQUIRE(LessonRunner::parse_deep_link(walked->deep_link(), id, step));
            CHECK(id == l.id);
            REQUIRE(linked->go_to(step).ok());
            CHECK(snapshot(*linked) == snapshot(*walked));
            if (!walked->current().actions.empty()) {
                REQUIRE(walked->perform().ok());
                REQUIRE(linked->go_to(step, true).ok());
                CHECK(snapshot(*linked) == snapshot(*walked));
            }
        }
        // back to step 1: the graphs are as opened
        auto fresh = open_runner(l);
        REQUIRE(walked->go_to(1).ok());
        CHECK(snapshot(*walked) == snapshot(*fresh));
        CHECK_FALSE(walked->go_to(0).ok());
        CHECK_FALSE(walked->go_to(walked->step_count() + 1).ok());
    }
    std::string id;
    int step = 0;
    CHECK_FALSE(LessonRunner::parse_deep_link("#m00-4", id, step));
    CHECK_FALSE(LessonRunner::parse_deep_link("#m00-4/0", id, step));
    CHECK_FALSE(LessonRunner::parse_deep_link("#m00-4/x", id, step));
    CHECK(LessonRunner::parse_deep_link("m00-4/12", id, step));
    CHECK(step == 12);
}

TEST_CASE("switching the language keeps the place and the graphs", "[lesson]") {
    const Lesson& zh = *catalog().find("m00-4", "zh-TW");
    const Lesson& en = *catalog().find("m00-4", "en");
    auto r = open_runner(zh);
    REQUIRE(r->go_to(5, true).ok());
    std::string before = snapshot(*r);
    REQUIRE(r->switch_language(en).ok());
    CHECK(r->step() == 5);
    CHECK(r->performed());
    CHECK(r->current().title == en.steps[4].title);
    CHECK(snapshot(*r) == before);
    // another lesson is not a translation
    CHECK_FALSE(r->switch_language(*catalog().find("m00-3", "en")).ok());
}
