// The lessons against real PyTorch: tests/golden/lessons/<id>.json holds what
// torch 2.14.1 printed, linted, raised and computed after every step of each
// lesson (tools/lesson_goldens.py replayed the same step actions on the same
// .pt2 files). Every step of every lesson, in both languages, is performed
// here by the lesson engine and compared: ep.graph and ep.module() text and
// code, the stale-code flag, lint, torch's errors, buffers and observers,
// whether the step changed anything, and each run's outputs and parity.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cctype>
#include <cmath>

#include "lesson/catalog.h"
#include "lesson/runner.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;
using json = nlohmann::ordered_json;

namespace {

std::string first_line(const std::string& s) {
    return s.substr(0, s.find('\n'));
}

json load_golden(const std::string& id) {
    std::string text = read_text(source_path("tests/golden/lessons/" + id + ".json"));
    json j = json::parse(text, nullptr, false);
    INFO("tests/golden/lessons/" << id << ".json");
    REQUIRE_FALSE(j.is_discarded());
    REQUIRE(j["format"] == "pt2lab.lesson_golden");
    return j;
}

bool close(double a, double b, double tol) {
    return std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b));
}

// Splits text into float literals ("0.008072374388575554", "1e-05") and the rest.
std::vector<std::string> float_split(const std::string& s, std::vector<double>& floats) {
    std::vector<std::string> rest(1);
    size_t i = 0;
    auto digit = [&](size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '9'; };
    while (i < s.size()) {
        bool starts = digit(i) && (i == 0 || !(std::isalnum(static_cast<unsigned char>(s[i - 1])) ||
                                               s[i - 1] == '_' || s[i - 1] == '.'));
        if (starts) {
            size_t k = i;
            while (digit(k)) ++k;
            bool is_float = false;
            if (k < s.size() && s[k] == '.' && digit(k + 1)) {
                is_float = true;
                ++k;
                while (digit(k)) ++k;
            }
            if (k < s.size() && s[k] == 'e' &&
                (digit(k + 1) || ((s[k + 1] == '-' || s[k + 1] == '+') && digit(k + 2)))) {
                is_float = true;
                k += 2;
                while (digit(k)) ++k;
            }
            if (is_float) {
                floats.push_back(std::stod(s.substr(i, k - i)));
                rest.emplace_back();
                i = k;
                continue;
            }
            rest.back() += s.substr(i, k - i);
            i = k;
            continue;
        }
        rest.back() += s[i++];
    }
    return rest;
}

// Printed graphs and code carry literals the graph computed (convert's scale):
// the text must match exactly except those, which may differ by 1e-6 relative
// (the engine's and torch's float32 kernels may round a max differently).
bool same_text(const std::string& expected, const std::string& actual) {
    if (expected == actual) return true;
    std::vector<double> fe, fa;
    auto te = float_split(expected, fe);
    auto ta = float_split(actual, fa);
    if (te != ta || fe.size() != fa.size()) return false;
    for (size_t i = 0; i < fe.size(); ++i)
        if (!close(fa[i], fe[i], 1e-6)) return false;
    return true;
}

void compare_state(const Workspace& w, const json& state) {
    size_t observers = 0;
    for (auto it = state.begin(); it != state.end(); ++it) {
        INFO("state " << it.key());
        if (it.value().is_object()) { // an observer
            ++observers;
            auto obs = w.state().observers.find(it.key());
            REQUIRE(obs != w.state().observers.end());
            const Observer& o = *obs->second;
            if (it.value()["min_val"].is_null()) {
                CHECK(o.calls() == 0);
                continue;
            }
            CHECK(close(o.min_val(), it.value()["min_val"].get<double>(), 1e-6));
            CHECK(close(o.max_val(), it.value()["max_val"].get<double>(), 1e-6));
            auto q = o.calculate_qparams();
            REQUIRE(q.ok());
            CHECK(close(q.value().scale, it.value()["scale"].get<double>(), 1e-6));
            CHECK(q.value().zero_point == it.value()["zero_point"].get<int64_t>());
            continue;
        }
        auto t = w.state().tensors.find(it.key());
        REQUIRE(t != w.state().tensors.end());
        REQUIRE(static_cast<size_t>(t->second->numel()) == it.value().size());
        for (size_t i = 0; i < it.value().size(); ++i)
            CHECK(
                close(t->second->get(static_cast<int64_t>(i)), it.value()[i].get<double>(), 1e-5));
    }
    CHECK(w.state().observers.size() == observers);
}

void compare_graph(const Workspace& w, const json& g) {
    std::string mg = graph_str(w.graph(GraphView::Module));
    INFO("module graph: " << first_difference(g["module_graph"].get<std::string>(), mg));
    CHECK(same_text(g["module_graph"].get<std::string>(), mg));
    const CodeView& mc = w.code(GraphView::Module);
    INFO("module code: " << first_difference(g["module_code"].get<std::string>(), mc.text));
    CHECK(same_text(g["module_code"].get<std::string>(), mc.text));
    if (!g.contains("program_graph")) return; // a symbolic_trace graph
    CHECK(mc.stale == g["module_code_stale"].get<bool>());
    std::string pg = graph_str(w.graph(GraphView::Program));
    INFO("program graph: " << first_difference(g["program_graph"].get<std::string>(), pg));
    CHECK(same_text(g["program_graph"].get<std::string>(), pg));
    const CodeView& pc = w.code(GraphView::Program);
    INFO("program code: " << first_difference(g["program_code"].get<std::string>(), pc.text));
    CHECK(same_text(g["program_code"].get<std::string>(), pc.text));
    std::string lint = w.lint_message(GraphView::Module);
    CHECK((lint.empty() ? std::string("ok") : first_line(lint)) == g["lint"].get<std::string>());
    compare_state(w, g["state"]);
}

void compare_run(const RunReport& run, const json& a) {
    REQUIRE(run.result.outputs.size() == a["outputs"].size());
    for (size_t i = 0; i < a["outputs"].size(); ++i) {
        const json& o = a["outputs"][i];
        const Tensor& t = *run.result.outputs[i].tensor;
        INFO("output " << i);
        std::vector<int64_t> shape = o["shape"].get<std::vector<int64_t>>();
        CHECK(t.sizes == shape);
        double sum = 0, abs_sum = 0, lo = INFINITY, hi = -INFINITY;
        for (int64_t k = 0; k < t.numel(); ++k) {
            double v = t.get(k);
            sum += v;
            abs_sum += std::fabs(v);
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
        CHECK(std::fabs(sum - o["sum"].get<double>()) <= 1e-5 * static_cast<double>(t.numel()));
        CHECK(std::fabs(abs_sum - o["abs_sum"].get<double>()) <=
              1e-5 * static_cast<double>(t.numel()));
        CHECK(std::fabs(lo - o["min"].get<double>()) <= 1e-5);
        CHECK(std::fabs(hi - o["max"].get<double>()) <= 1e-5);
        for (size_t k = 0; k < o["first"].size(); ++k)
            CHECK(std::fabs(t.get(static_cast<int64_t>(k)) - o["first"][k].get<double>()) <= 1e-5);
        // parity against the file as loaded: the same verdict torch reached
        const json& p = a["parity"][i];
        REQUIRE(i < run.parity.outputs.size());
        const TensorParity& tp = run.parity.outputs[i];
        CHECK(tp.bit_identical == p["bit_identical"].get<bool>());
        CHECK(std::fabs(tp.max_abs - p["max_abs"].get<double>()) <= 1e-5);
    }
    if (run.reference) {
        for (size_t i = 0; i < a["reference_max_abs"].size(); ++i)
            if (a["reference_max_abs"][i].get<double>() <= 1e-5)
                CHECK(run.reference->outputs[i].max_abs <= 1e-5);
    }
}

// The golden must have been made from these very steps (else: regenerate it).
void check_golden_is_current(const Lesson& l, const json& g) {
    REQUIRE(g["steps"].size() == l.steps.size());
    for (size_t k = 0; k < l.steps.size(); ++k) {
        const LessonStep& st = l.steps[k];
        const json& gs = g["steps"][k];
        INFO(l.file << " step " << k + 1
                    << ": the golden was made from other actions; regenerate it with "
                       "scripts/torch_env.sh run sid python3 tools/lesson_goldens.py");
        REQUIRE(gs["actions"].size() == st.actions.size());
        for (size_t i = 0; i < st.actions.size(); ++i) {
            const json& ga = gs["actions"][i];
            CHECK(ga["graph"] == st.actions[i].graph);
            json mine = json::parse(st.actions[i].json);
            mine.erase("label");
            if (st.actions[i].kind == "undo")
                CHECK(ga["kind"] == "undo");
            else
                CHECK(ga["action"] == mine);
        }
    }
}

} // namespace

TEST_CASE("every lesson step matches what real PyTorch did with the same actions", "[lesson]") {
    auto cat = load_lesson_catalog(source_path("assets/lessons"));
    REQUIRE(cat.ok());
    int steps = 0, graphs = 0, runs = 0, errors = 0, compared_steps = 0;
    for (const auto& entry : cat.value().entries) {
        json golden = load_golden(entry.id);
        for (const auto& [lang, lesson] : entry.by_lang) {
            check_golden_is_current(lesson, golden);
            auto r = LessonRunner::open(lesson, LessonRunner::files_under(PT2LAB_SOURCE_DIR));
            REQUIRE(r.ok());
            LessonRunner& run = *r.value();
            for (int k = 1; k <= run.step_count(); ++k) {
                const json& gs = golden["steps"][static_cast<size_t>(k - 1)];
                INFO(lesson.file << " step " << k << " (" << run.lesson().steps[k - 1].title
                                 << ")");
                REQUIRE(run.go_to(k, true).ok());
                const StepExpect& claim = run.lesson().steps[static_cast<size_t>(k - 1)].expect;
                if (claim.same_outputs >= 0) {
                    // what the text says about the runs' outputs holds in torch too
                    std::vector<json> outs;
                    for (const json& ga : gs["actions"])
                        if (ga.contains("outputs")) outs.push_back(ga["outputs"]);
                    REQUIRE(outs.size() >= 2);
                    bool same = true;
                    for (size_t i = 1; i < outs.size(); ++i) same = same && outs[i] == outs[0];
                    CHECK(same == (claim.same_outputs == 1));
                }
                if (run.report()) {
                    const LessonStepReport& rep = *run.report();
                    CHECK(rep.changed == gs["changed"].get<bool>());
                    // The line under the results that sets the step's runs against each
                    // other says what torch's outputs of the same runs say.
                    std::vector<json> torch_outs;
                    for (const json& ga : gs["actions"])
                        if (ga.contains("outputs")) torch_outs.push_back(ga["outputs"]);
                    auto compared = compare_step_runs(rep);
                    CHECK(compared.has_value() == (torch_outs.size() >= 2));
                    if (compared) {
                        bool same = true;
                        for (size_t i = 1; i < torch_outs.size(); ++i)
                            same = same && torch_outs[i] == torch_outs[0];
                        CHECK(compared->bit_identical == same);
                        CHECK((compared->max_abs == 0) == same);
                        ++compared_steps;
                    }
                    REQUIRE(rep.actions.size() == gs["actions"].size());
                    for (size_t i = 0; i < rep.actions.size(); ++i) {
                        const LessonActionReport& a = rep.actions[i];
                        const json& ga = gs["actions"][i];
                        INFO("action " << i + 1 << " (" << a.kind << ")");
                        CHECK(a.changed == ga["changed"].get<bool>());
                        if (ga.contains("torch_error")) {
                            ++errors;
                            CHECK(a.torch_error_type ==
                                  ga["torch_error"]["type"].get<std::string>());
                            CHECK(first_line(a.torch_error) ==
                                  ga["torch_error"]["message"].get<std::string>());
                        } else {
                            CHECK(a.torch_error.empty());
                        }
                        CHECK(a.run.has_value() == ga.contains("outputs"));
                        if (a.run && ga.contains("outputs")) {
                            compare_run(*a.run, ga);
                            ++runs;
                        }
                    }
                } else {
                    CHECK(gs["actions"].empty());
                }
                for (auto it = gs["graphs"].begin(); it != gs["graphs"].end(); ++it) {
                    INFO("graph " << it.key());
                    const Workspace* w = run.workspace(it.key());
                    REQUIRE(w);
                    compare_graph(*w, it.value());
                    ++graphs;
                }
                ++steps;
            }
        }
    }
    CHECK(steps >= 2 * 35);
    CHECK(graphs >= 2 * 50);
    CHECK(runs >= 2 * 15);
    CHECK(errors >= 2 * 4);         // lint, erase_node, train(), eval()
    CHECK(compared_steps >= 2 * 2); // M00-1's three styles, M00-2's eval and train
}

namespace {
// The lines of a printed graph or code that convert wrote (q/dq and the return),
// as tools/lesson_goldens.py picks them.
std::vector<std::string> qdq_lines(const std::string& text) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        size_t lead = line.find_first_not_of(' ');
        if (line.find("quantize_per_tensor") != std::string::npos ||
            (lead != std::string::npos && line.compare(lead, 6, "return") == 0))
            out.push_back(line);
        start = end + 1;
    }
    return out;
}
} // namespace

TEST_CASE("convert steps match torch.ao's real convert_pt2e (torch 2.6)", "[lesson]") {
    auto cat = load_lesson_catalog(source_path("assets/lessons"));
    REQUIRE(cat.ok());
    auto files = list_dir("tests/golden/lessons/pt2e", ".json");
    REQUIRE_FALSE(files.empty());
    int checked = 0;
    for (const auto& rel : files) {
        json g = json::parse(read_text(source_path(rel)), nullptr, false);
        REQUIRE_FALSE(g.is_discarded());
        REQUIRE(g["format"] == "pt2lab.lesson_golden.pt2e");
        for (const char* lang : {"zh-TW", "en"}) {
            const Lesson* l = cat.value().find(g["lesson"].get<std::string>(), lang);
            REQUIRE(l);
            auto r = LessonRunner::open(*l, LessonRunner::files_under(PT2LAB_SOURCE_DIR));
            REQUIRE(r.ok());
            for (const json& st : g["steps"]) {
                int k = st["index"].get<int>();
                INFO(rel << " / " << l->file << " step " << k);
                REQUIRE(r.value()->go_to(k, true).ok());
                const Workspace* w = r.value()->workspace(st["graph"].get<std::string>());
                REQUIRE(w);
                auto mine = qdq_lines(graph_str(w->graph(GraphView::Module)));
                auto theirs = st["qdq_graph_lines"].get<std::vector<std::string>>();
                REQUIRE(mine.size() == theirs.size());
                for (size_t i = 0; i < mine.size(); ++i) {
                    INFO(theirs[i] << "\n" << mine[i]);
                    CHECK(same_text(theirs[i], mine[i]));
                }
                auto code = qdq_lines(w->code(GraphView::Module).text);
                auto their_code = st["qdq_code_lines"].get<std::vector<std::string>>();
                REQUIRE(code.size() == their_code.size());
                for (size_t i = 0; i < code.size(); ++i) CHECK(same_text(their_code[i], code[i]));
                // the runs after convert: outputs and the quantization error
                std::vector<const LessonActionReport*> runs;
                for (const auto& a : r.value()->report()->actions)
                    if (a.run) runs.push_back(&a);
                REQUIRE(runs.size() == st["runs"].size());
                for (size_t i = 0; i < runs.size(); ++i) compare_run(*runs[i]->run, st["runs"][i]);
                ++checked;
            }
        }
    }
    CHECK(checked >= 2);
}
