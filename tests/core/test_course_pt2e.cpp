// The course folder courses/pt2e (a teacher's course: lessons, index.json; graphs from the
// page's own assets/graphs by the check's "folders above" rule) and its lesson M01-2,
// prepare_pt2e taken apart on conv_bn_relu (eval): the folder passes check_course, and the
// numbers the lesson's steps show are torch.ao's. The lesson's calibrate and convert steps
// are driven through a LessonRunner in both languages and compared with torch 2.6
// torch.ao's, recorded by tools/pt2e_goldens.py under "lesson_m01_2" in
// tests/golden/pt2e/conv_bn_relu_eval.json: every observer's min / max, scale and
// zero_point after each calibrate step, and the q/dq graph and code after convert with
// fold_quantize false and true, and each layer's SQNR in the run step. Reads files, so
// native only (tests/CMakeLists.txt).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>

#include "graph/printer.h"
#include "lesson/lesson.h"
#include "lesson/lesson_check.h"
#include "lesson/runner.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;
using nlohmann::json;

namespace {

std::string without_guards(const std::string& s, bool);

const char* kCourse = "courses/pt2e";

json lesson_golden() {
    json g = json::parse(read_text(source_path("tests/golden/pt2e/conv_bn_relu_eval.json")),
                         nullptr, false);
    REQUIRE_FALSE(g.is_discarded());
    REQUIRE(g["producer"]["label"] == "torch 2.6 torch.ao");
    REQUIRE(g.contains("lesson_m01_2"));
    return g["lesson_m01_2"];
}

Lesson lesson_of(const std::string& lang) {
    const std::string file = std::string(kCourse) + "/m01-2." + lang + ".md";
    auto l = parse_lesson(read_text(source_path(file)), file);
    INFO((l.ok() ? std::string() : l.error().str()));
    REQUIRE(l.ok());
    return l.take();
}

// Without the lines of torch 2.14's `_guards_fn` call (ep.module() has it, torch 2.6's
// export_for_training module has not), and without it among x's users.
std::string without_guards(const std::string& s) {
    static const std::regex x_users(R"(%x : \[num_users=2\] = placeholder)");
    if (s.find("%x : [num_users=") != std::string::npos) {
        CHECK(s.find("%_guards_fn : [num_users=0] = call_module[target=_guards_fn](args = (%x,)") !=
              std::string::npos);
        return without_guards(std::regex_replace(s, x_users, "%x : [num_users=1] = placeholder"),
                              false);
    }
    return without_guards(s, false);
}
std::string without_guards(const std::string& s, bool) {
    std::string out;
    size_t at = 0;
    while (at < s.size()) {
        size_t end = s.find('\n', at);
        if (end == std::string::npos) end = s.size();
        std::string line = s.substr(at, end - at);
        if (line.find("_guards_fn") == std::string::npos) out += line + "\n";
        at = end + 1;
    }
    if (!s.empty() && s.back() != '\n' && !out.empty()) out.pop_back();
    return out;
}

// Equal texts, except float literals (convert's scales, computed from pt2lab's own
// activations) within `rel` relative of torch's.
void check_same_text(const std::string& what, const std::string& want, const std::string& got,
                     double rel) {
    static const std::regex number(R"(-?\d+\.\d+(e[-+]?\d+)?)");
    auto split = [](const std::string& s, std::vector<std::string>& rest,
                    std::vector<double>& floats) {
        std::string tail = s;
        std::smatch m;
        std::string text;
        while (std::regex_search(tail, m, number)) {
            text += m.prefix().str() + "#";
            floats.push_back(std::strtod(m.str().c_str(), nullptr));
            tail = m.suffix().str();
        }
        rest.push_back(text + tail);
    };
    std::vector<std::string> tw, tg;
    std::vector<double> fw, fg;
    split(want, tw, fw);
    split(got, tg, fg);
    INFO(what << ": " << first_difference(want, got));
    REQUIRE(tw == tg);
    REQUIRE(fw.size() == fg.size());
    CHECK_FALSE(fw.empty());
    for (size_t k = 0; k < fw.size(); ++k) {
        INFO(what << ": literal " << k << ": torch " << fw[k] << ", pt2lab " << fg[k]);
        CHECK(std::fabs(fg[k] - fw[k]) <= rel * std::fabs(fw[k]));
    }
}

// The steps whose actions are on graph "main" and include `kind`, in order.
std::vector<int> steps_with(const Lesson& l, const std::string& kind) {
    std::vector<int> out;
    for (const auto& s : l.steps)
        for (const auto& a : s.actions)
            if (a.kind == kind && (a.graph.empty() ? s.graph : a.graph) == "main") {
                out.push_back(s.index);
                break;
            }
    return out;
}

} // namespace

TEST_CASE("the course folder courses/pt2e passes pt2lab lesson check", "[lesson]") {
    auto c = check_course(source_path(kCourse));
    INFO((c.ok() ? std::string() : c.error().str()));
    REQUIRE(c.ok());
    const CourseCheck& check = c.value();
    for (const auto& p : check.problems) INFO(p.file << ":" << p.line << ": " << p.message);
    CHECK(check.ok());
    CHECK(check.folder);
    CHECK(check.lesson_ids() == 1);
    CHECK(check.lessons.size() == 2); // zh-TW and en
    CHECK(check.failed_expectations == 0);
    CHECK(check.expectations > 0);
    CHECK(check.summary().find("all hold") != std::string::npos);
    // The committed index.json is the one the check writes.
    CHECK(read_text(source_path(std::string(kCourse) + "/index.json")) == course_index_json(check));
}

TEST_CASE("the course folder courses/pt2e holds its own graphs", "[lesson]") {
    // A course folder is self-contained (a teacher copies it as it is): its graphs are
    // copies of the lesson assets they name, byte for byte (after tools/make_assets.py
    // writes new assets, copy them again).
    const Lesson lesson = lesson_of("en");
    REQUIRE(lesson.graphs.size() == 2);
    for (const LessonGraph& g : lesson.graphs) {
        INFO(g.key << ": " << g.path);
        const std::string mine = std::string(kCourse) + "/" + g.path;
        CHECK(resolve_lesson_graph(source_path(kCourse), g.path) == source_path(mine));
        CHECK(read_text(source_path(mine)) == read_text(source_path(g.path)));
    }
}

TEST_CASE("M01-2's fold and prepare steps leave torch.ao's graphs", "[lesson]") {
    // The fold step is torch.ao's _fuse_conv_bn_ alone; the prepare steps are
    // prepare_pt2e on the lesson's two graphs (tests/golden/pt2e/<asset>.json "prepared").
    const json golden = lesson_golden();
    auto asset_golden = [](const std::string& name) {
        json g = json::parse(read_text(source_path("tests/golden/pt2e/" + name + ".json")), nullptr,
                             false);
        REQUIRE_FALSE(g.is_discarded());
        return g;
    };
    const json main_prepared = asset_golden("conv_bn_relu_eval")["prepared"];
    const json shared_prepared = asset_golden("style_modules")["prepared"];
    for (const std::string lang : {"zh-TW", "en"}) {
        INFO(lang);
        const Lesson lesson = lesson_of(lang);
        bool shared_is_style_modules = false;
        for (const LessonGraph& g : lesson.graphs)
            shared_is_style_modules |=
                g.key == "shared" && g.path == "assets/graphs/style_modules.pt2";
        REQUIRE(shared_is_style_modules);
        auto opened = LessonRunner::open(lesson, LessonRunner::files_under(PT2LAB_SOURCE_DIR));
        REQUIRE(opened.ok());
        LessonRunner& runner = *opened.value();
        struct Want {
            std::string kind, graph;
            const json* golden;
        };
        const std::vector<Want> wants = {{"fold_conv_bn", "main", &golden["folded"]},
                                         {"prepare", "main", &main_prepared},
                                         {"prepare", "shared", &shared_prepared}};
        for (const Want& w : wants) {
            int index = 0;
            for (const auto& s : lesson.steps)
                for (const auto& a : s.actions)
                    if (!index && a.kind == w.kind &&
                        (a.graph.empty() ? s.graph : a.graph) == w.graph)
                        index = s.index;
            INFO(w.kind << " on " << w.graph << ": step " << index);
            REQUIRE(index > 0);
            REQUIRE(runner.go_to(index, true).ok());
            const GraphModule& gm = runner.workspace(w.graph)->module();
            const std::string want_graph = (*w.golden)["graph"].get<std::string>();
            const std::string graph = without_guards(graph_str(*gm.graph));
            INFO(first_difference(want_graph, graph));
            CHECK(graph == want_graph);
        }
    }
}

TEST_CASE("M01-2's observers, qparams and q/dq graphs are torch.ao's", "[lesson]") {
    const json golden = lesson_golden();
    for (const std::string lang : {"zh-TW", "en"}) {
        INFO(lang);
        const Lesson lesson = lesson_of(lang);
        auto opened = LessonRunner::open(lesson, LessonRunner::files_under(PT2LAB_SOURCE_DIR));
        INFO((opened.ok() ? std::string() : opened.error().str()));
        REQUIRE(opened.ok());
        LessonRunner& runner = *opened.value();

        // The calibrate steps: what torch.ao was fed is what the steps feed (the sample
        // input, then pt2lab's seeded batches 1 .. repeat-1, each step on top of the last).
        const std::vector<int> calibrations = steps_with(lesson, "calibrate");
        REQUIRE(calibrations.size() == golden["calibrate"].size());
        for (size_t c = 0; c < calibrations.size(); ++c) {
            const json& g = golden["calibrate"][c];
            const LessonStep& step = lesson.steps[size_t(calibrations[c] - 1)];
            INFO("step " << step.index << " " << step.title);
            REQUIRE(step.actions.size() == 1);
            json action = json::parse(step.actions[0].json);
            CHECK(action.value("inputs", std::string("auto")) == "auto");
            CHECK(action.value("repeat", 1) == static_cast<int>(g["batches"].size()));
            CHECK(g["batches"][0] == "sample");
            for (size_t b = 1; b < g["batches"].size(); ++b) CHECK(g["batches"][b] == int(b));

            REQUIRE(runner.go_to(step.index, true).ok());
            const Workspace* ws = runner.workspace("main");
            REQUIRE(ws);
            const auto& observers = ws->state().observers;
            REQUIRE(observers.size() == g["observers"].size());
            for (const auto& o : g["observers"]) {
                const std::string name = o["name"].get<std::string>();
                INFO(name);
                REQUIRE(observers.count(name));
                const Observer& obs = *observers.at(name);
                const double min_val = o["min_val"].get<double>(),
                             max_val = o["max_val"].get<double>();
                // The weight and the input are the same tensors in both: their range is
                // exact; relu's is computed by pt2lab's own convolution (float noise).
                const double tol = name == "activation_post_process_2" ? 1e-5 : 0.0;
                CHECK(std::fabs(obs.min_val() - min_val) <= tol * std::fabs(min_val) + 1e-12);
                CHECK(std::fabs(obs.max_val() - max_val) <= tol * std::fabs(max_val));
                auto q = obs.calculate_qparams();
                REQUIRE(q.ok());
                const double scale = o["scale"].get<double>();
                CHECK(std::fabs(q.value().scale - scale) <= 1e-4 * scale);
                CHECK(std::llabs(q.value().zero_point - o["zero_point"].get<int64_t>()) <= 1);
            }
        }

        // The convert steps: fold_quantize false, then (after an undo) true.
        const std::vector<int> converts = steps_with(lesson, "convert");
        REQUIRE(converts.size() == 2);
        for (size_t c = 0; c < converts.size(); ++c) {
            const LessonStep& step = lesson.steps[size_t(converts[c] - 1)];
            INFO("step " << step.index << " " << step.title);
            bool fold = true;
            for (const auto& a : step.actions)
                if (a.kind == "convert") fold = json::parse(a.json).value("fold_quantize", true);
            CHECK(fold == (c == 1));
            const json& g = golden[fold ? "converted_fold_true" : "converted_fold_false"];
            REQUIRE(runner.go_to(step.index, true).ok());
            const GraphModule& gm = runner.workspace("main")->module();
            check_same_text("graph", g["graph"].get<std::string>(),
                            without_guards(graph_str(*gm.graph)), 1e-4);
            // torch 2.6 frees `x` after its last use; the module with `_guards_fn` (torch
            // 2.14's, which the lesson goldens hold pt2lab's code to) does not.
            std::string want = g["code"].get<std::string>();
            const std::string freed = ";  x = None";
            const size_t at = want.find(freed);
            REQUIRE(at != std::string::npos);
            want.erase(at, freed.size());
            check_same_text("code", want, without_guards(gm.code()), 1e-4);
        }

        // The last run step: each quantized layer's SQNR against the float model, as torch.ao's
        // converted module gives it on the same input. pt2lab's float convolution is not
        // bit-identical to torch's, so a few values may round to the next int8 level.
        const std::vector<int> runs = steps_with(lesson, "run");
        REQUIRE(runs.size() == 3); // the float model, after folding, the quantized model
        REQUIRE(runner.go_to(runs.back(), true).ok());
        const auto& run = runner.workspace("main")->last_run();
        REQUIRE(run);
        REQUIRE(run->layers);
        // The outputs table: the quantized output against the float model's.
        INFO("output SQNR " << run->parity.min_sqnr_db() << " dB");
        CHECK(std::fabs(run->parity.min_sqnr_db() - golden["output_sqnr_db"].get<double>()) <=
              0.05);
        const json& want_layers = golden["layers"];
        REQUIRE(run->layers->rows.size() == want_layers.size());
        for (size_t k = 0; k < want_layers.size(); ++k) {
            const LayerParity& row = run->layers->rows[k];
            INFO("layer " << row.layer.node << ": SQNR " << row.parity.sqnr_db << " dB");
            CHECK(row.layer.node == want_layers[k]["node"].get<std::string>());
            CHECK(row.layer.reference == want_layers[k]["reference"].get<std::string>());
            CHECK(std::fabs(row.parity.sqnr_db - want_layers[k]["sqnr_db"].get<double>()) <= 0.05);
        }
    }
}
