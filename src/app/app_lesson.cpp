// App's lessons: the catalog the loader fetched, a LessonRunner over the
// lesson's graphs (downloaded on demand), steps, answers, language, progress
// in localStorage, the deep link in the URL hash and the HTML text view.
// Every graph change goes through the runner, so the page shows the engine's state.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "app.h"
#include "graph/printer.h"
#include "lesson/lesson_check.h"
#include "platform/platform.h"
#include "ui/widgets.h"
#include "util/check.h"

namespace pt2lab::app {
namespace {

using nlohmann::json;

const char kLessonAsset[] = "lesson-asset:"; // fetch name prefix of a lesson graph

bool is_lesson_file(const std::string& name) {
    if (name.size() < 4 || name.rfind(kLessonAsset, 0) == 0) return false;
    std::string ext = name.substr(name.size() - 3);
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return ext == ".md";
}

std::string file_part(const std::string& path) {
    size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool known_lang(const std::string& lang) {
    for (const char* const* l = kLessonLangs; *l; ++l)
        if (lang == *l) return true;
    return false;
}

json blocks_json(const std::vector<MdBlock>& blocks) {
    json out = json::array();
    for (const MdBlock& b : blocks) {
        json o;
        switch (b.kind) {
        case MdBlock::Kind::Heading: o = {{"kind", "heading"}, {"text", b.text}}; break;
        case MdBlock::Kind::Paragraph: o = {{"kind", "paragraph"}, {"text", b.text}}; break;
        case MdBlock::Kind::Bullets: o = {{"kind", "bullets"}, {"items", b.items}}; break;
        case MdBlock::Kind::Numbered: o = {{"kind", "numbered"}, {"items", b.items}}; break;
        case MdBlock::Kind::Table: o = {{"kind", "table"}, {"rows", b.rows}}; break;
        case MdBlock::Kind::Code:
            o = {{"kind", "code"}, {"lang", b.lang}, {"lines", b.items}};
            break;
        }
        out.push_back(o);
    }
    return out;
}

// The dock tab that shows a step's `show` entry, if one does.
std::optional<Tab> tab_for(const std::string& s) {
    if (s == "code") return Tab::Code;
    if (s == "run" || s == "parity") return Tab::Run;
    if (s == "observers") return Tab::Observers;
    if (s == "signature" || s == "weights" || s == "state") return Tab::Program;
    if (s == "history" || s == "torch_error") return Tab::Log;
    return std::nullopt;
}

// The dock tabs a step's `show` list points at, first mention first.
std::vector<Tab> tabs_for(const std::vector<std::string>& show) {
    std::vector<Tab> tabs;
    for (const std::string& s : show)
        if (auto t = tab_for(s); t && std::find(tabs.begin(), tabs.end(), *t) == tabs.end())
            tabs.push_back(*t);
    return tabs;
}

} // namespace

json step_map_json(const std::map<int, int>& m) {
    json j = json::object();
    for (const auto& [step, opt] : m) j[std::to_string(step)] = opt;
    return j;
}

std::map<int, int> step_map(const json& progress, const char* key) {
    std::map<int, int> m;
    if (auto a = progress.find(key); a != progress.end() && a->is_object())
        for (const auto& [step, opt] : a->items())
            if (opt.is_number_integer()) m[std::atoi(step.c_str())] = opt.get<int>();
    return m;
}

bool LessonProgress::is_done(int step) const {
    return std::binary_search(done.begin(), done.end(), step);
}

const Lesson* App::next_lesson() const {
    if (!lesson_ || lesson_->step() < lesson_->step_count()) return nullptr;
    const auto& entries = catalog_.entries;
    for (size_t i = 0; i + 1 < entries.size(); ++i)
        if (entries[i].id == lesson_->lesson().id) return catalog_.find(entries[i + 1].id, lang_);
    return nullptr;
}

bool App::first_visit() const {
    if (lesson_ || welcomed_ || !pending_id_.empty()) return false;
    for (const auto& [id, p] : progress_)
        if (!p.done.empty() || !p.answers.empty()) return false;
    return true;
}

void App::dismiss_welcome() {
    welcomed_ = true;
    platform::save_setting("welcomed", "1");
}

void App::load_lessons() {
    welcomed_ = platform::load_setting("welcomed") == "1";
    // The page's language: the last choice, else the browser's (page_strings.h page_language).
    lang_ = page_language(platform::load_setting("lesson_lang"), platform::browser_language());
    if (!known_lang(lang_)) lang_ = kLessonLangs[0];
    platform::set_page_language(lang_, web_words_json(lang_));
    json p = json::parse(platform::load_setting("lesson_progress"), nullptr, false);
    if (p.is_object())
        for (const auto& [id, v] : p.items()) {
            if (!v.is_object()) continue;
            LessonProgress& lp = progress_[id];
            if (auto d = v.find("done"); d != v.end() && d->is_array())
                for (const auto& k : *d)
                    if (k.is_number_integer()) lp.done.push_back(k.get<int>());
            std::sort(lp.done.begin(), lp.done.end());
            lp.done.erase(std::unique(lp.done.begin(), lp.done.end()), lp.done.end());
            lp.answers = step_map(v, "answers");
            lp.first = step_map(v, "first");
        }

    // assets/lessons/index.json (scripts/build_web.sh) names the files the loader fetched;
    // with ?course=folder/, the course's index.json (pt2lab lesson check wrote it) does,
    // and the loader fetched them as course/<name> (web/loader.js).
    std::vector<std::pair<std::string, std::string>> names; // preloaded key, shown path
    const std::vector<uint8_t> course = platform::preloaded("course/index.json");
    if (!course.empty()) {
        const std::vector<uint8_t> base = platform::preloaded("course/base");
        course_base_.assign(base.begin(), base.end());
        json idx = json::parse(course.begin(), course.end(), nullptr, false);
        if (!idx.is_object() || !idx.contains("lessons") || !idx["lessons"].is_array()) {
            catalog_error_ = course_base_ + "index.json is not a course index";
            log(LogLine::Kind::Error, "lessons: " + catalog_error_);
            return;
        }
        for (const json& l : idx["lessons"])
            if (l.is_object() && l.contains("files") && l["files"].is_object())
                for (const auto& [lang, f] : l["files"].items())
                    if (f.is_string())
                        names.emplace_back("course/" + f.get<std::string>(),
                                           course_base_ + f.get<std::string>());
    } else {
        std::vector<uint8_t> index = platform::preloaded("assets/lessons/index.json");
        json list = json::parse(index.begin(), index.end(), nullptr, false);
        if (!list.is_array()) {
            catalog_error_ = "assets/lessons/index.json is missing or not a JSON list";
            return;
        }
        for (const auto& n : list)
            if (n.is_string())
                names.emplace_back("assets/lessons/" + n.get<std::string>(),
                                   "assets/lessons/" + n.get<std::string>());
    }
    std::vector<std::pair<std::string, std::string>> files;
    for (const auto& [key, shown] : names) {
        std::vector<uint8_t> text = platform::preloaded(key);
        if (text.empty()) {
            catalog_error_ = shown + ": not downloaded";
            return;
        }
        files.emplace_back(shown, std::string(text.begin(), text.end()));
        glyphs_.note(files.back().second); // a teacher's lesson may use any character
    }
    auto cat = lesson_catalog(files);
    if (!cat.ok()) {
        catalog_error_ = cat.error().str();
        log(LogLine::Kind::Error, "lessons: " + catalog_error_);
        return;
    }
    catalog_ = cat.take();
    log(LogLine::Kind::Info,
        "lessons: " + std::to_string(catalog_.entries.size()) + " in " + lang_);
    follow_hash(start_link());
}

const LessonProgress& App::progress(const std::string& id) const {
    static const LessonProgress none;
    auto it = progress_.find(id);
    return it == progress_.end() ? none : it->second;
}

void App::save_progress() {
    json j = json::object();
    for (const auto& [id, p] : progress_) {
        j[id] = {{"done", p.done},
                 {"answers", step_map_json(p.answers)},
                 {"first", step_map_json(p.first)}};
    }
    platform::save_setting("lesson_progress", j.dump());
}

std::string App::start_link() const {
    return options_.step.empty() ? platform::url_hash() : options_.step;
}

void App::follow_hash(const std::string& raw) {
    std::string hash = raw.rfind('#', 0) == 0 ? raw.substr(1) : raw;
    std::string id;
    int step = 0;
    auto t = [this](Str s) { return text(s, lang_); };
    auto notice = [&](const std::string& text) {
        link_notice_ = text;
        link_notice_keep_ = false;
        log(LogLine::Kind::Warning, text);
        platform::set_text_view(text_view_json());
    };
    if (!LessonRunner::parse_deep_link(hash, id, step)) {
        // Not a lesson step: the page's own "file=..." or no hash (Back to before
        // the lesson was opened) leaves the lesson; anything else is a bad link.
        if (hash.empty() || hash.find('=') != std::string::npos) {
            if (lesson_ || !pending_id_.empty()) {
                followed_hash_ = "#" + hash;
                leave_lesson();
            }
            return;
        }
        size_t slash = hash.rfind('/');
        std::string lesson = slash == std::string::npos ? hash : hash.substr(0, slash);
        if (catalog_.find(lesson, lang_))
            notice(strf(t(Str::link_no_step), hash.c_str(), lesson.c_str(), lesson.c_str()));
        else
            notice(strf(t(Str::link_not_step), hash.c_str()));
        return;
    }
    const Lesson* l = catalog_.find(id, lang_);
    if (!l) {
        std::string ids;
        for (const LessonCatalog::Entry& e : catalog_.entries)
            ids += (ids.empty() ? "" : ", ") + e.id;
        notice(strf(t(Str::link_no_lesson), hash.c_str(), ids.c_str()));
        return;
    }
    link_notice_.clear();
    int steps = static_cast<int>(l->steps.size());
    if (step > steps) {
        link_notice_ = strf(t(Str::link_past_end), id.c_str(), steps, hash.c_str(), steps);
        link_notice_keep_ = true;
        log(LogLine::Kind::Warning, link_notice_);
    }
    followed_hash_ = "#" + hash;
    if (lesson_ && lesson_->lesson().id == id)
        lesson_go(step);
    else
        open_lesson(id, step);
}

void App::dismiss_link_notice() {
    link_notice_.clear();
    platform::set_text_view(text_view_json());
}

void App::open_lesson(const std::string& id, int step) {
    requests_.push_back({Request::Kind::LessonOpen, {}, id, step});
}
void App::lesson_go(int step) {
    requests_.push_back({Request::Kind::LessonGo, {}, {}, step});
}
void App::lesson_perform() {
    requests_.push_back({Request::Kind::LessonPerform, {}, {}, 0});
}
void App::lesson_answer(int option) {
    requests_.push_back({Request::Kind::LessonAnswer, {}, {}, option});
}
void App::lesson_reset() {
    requests_.push_back({Request::Kind::LessonReset, {}, {}, 0});
}
void App::set_lesson_lang(const std::string& lang) {
    requests_.push_back({Request::Kind::LessonLang, {}, lang, 0});
}
void App::leave_lesson() {
    requests_.push_back({Request::Kind::LessonLeave, {}, {}, 0});
}

bool App::take_lesson_file(const std::string& name, std::vector<uint8_t>& bytes,
                           const std::string& error) {
    if (name.rfind(kLessonAsset, 0) != 0) return false;
    std::string path = name.substr(sizeof kLessonAsset - 1);
    if (!error.empty() && !course_base_.empty() && course_fallback_.insert(path).second) {
        log(LogLine::Kind::Info, course_base_ + path + ": " + error + "; fetching " + path);
        platform::fetch_file(path, name);
        return true;
    }
    if (!error.empty()) {
        view_.error = path + ": " + error;
        if (preview_ && pending_id_ == preview_->id)
            view_.error += strf(text(Str::lesson_preview_graph, lang_), file_part(path).c_str(),
                                preview_->file.c_str());
        log(LogLine::Kind::Error, view_.error);
        pending_id_.clear();
        requested_.erase(path);
        return true;
    }
    lesson_bytes_[path] = std::move(bytes);
    return true;
}

void App::start_pending_lesson() {
    if (pending_id_.empty()) return;
    const Lesson* l = catalog_.find(pending_id_, lang_);
    if (!l) {
        pending_id_.clear();
        return;
    }
    for (const LessonGraph& g : l->graphs)
        if (!lesson_bytes_.count(g.path)) return; // still downloading
    auto reader = [this](const std::string& path) -> Result<std::vector<uint8_t>> {
        auto it = lesson_bytes_.find(path);
        if (it == lesson_bytes_.end()) return make_error(path, "not downloaded");
        return it->second;
    };
    auto r = LessonRunner::open(*l, reader);
    std::string id = pending_id_;
    int step = std::clamp(pending_step_, 1, static_cast<int>(l->steps.size()));
    pending_id_.clear();
    if (!r.ok()) {
        view_.error = r.error().str();
        log(LogLine::Kind::Error, "could not open lesson " + id + ": " + view_.error);
        return;
    }
    if (busy()) { // the file's action would finish under the lesson: it stops here
        log(LogLine::Kind::Info, std::string(action_kind_name(ws_->pending_action()->kind)) +
                                     " cancelled: lesson " + id + " was opened");
        ws_->cancel();
        cancel_requested_ = false;
    }
    drop_opening("dropped: lesson " + id + " was opened"); // the later choice wins
    drop_file_requests();
    lesson_ = r.take();
    if (Status s = lesson_->go_to(step); !s.ok()) {
        view_.error = s.error().str();
        log(LogLine::Kind::Error, view_.error);
    }
    log(LogLine::Kind::Info, "lesson " + id + ", step " + std::to_string(lesson_->step()));
    if (preview_ && preview_->id == id && !preview_->checked) check_preview();
    enter_step();
}

void App::take_dropped_lessons(std::vector<platform::OpenedFile>& files) {
    std::set<size_t> taken;
    for (size_t k = 0; k < files.size(); ++k) {
        platform::OpenedFile& f = files[k];
        if (!is_lesson_file(f.name) || !f.error.empty()) continue;
        taken.insert(k);
        std::string text(f.bytes.begin(), f.bytes.end());
        glyphs_.note(text);
        auto parsed = parse_lesson(text, f.name);
        if (!parsed.ok()) { // file:line, as the check says it
            view_.error = parsed.error().str();
            log(LogLine::Kind::Error, "lesson " + view_.error);
            continue;
        }
        Lesson lesson = parsed.take();
        // The graphs dropped beside it, by the file names the lesson's paths end in.
        for (const LessonGraph& g : lesson.graphs)
            for (size_t j = 0; j < files.size(); ++j) {
                platform::OpenedFile& o = files[j];
                if (taken.count(j) || !o.error.empty() || o.name != file_part(g.path)) continue;
                std::vector<uint8_t> bytes = std::move(o.bytes);
                if (bytes.empty() && o.shared && o.late.empty()) bytes = *o.shared;
                if (bytes.empty()) continue;
                lesson_bytes_[g.path] = std::move(bytes);
                requested_.erase(g.path);
                taken.insert(j);
                log(LogLine::Kind::Info,
                    f.name + ": graph \"" + g.key + "\" is the dropped " + o.name);
            }
        // It stands in for the catalog's lesson of its id and language (or joins it).
        auto e = std::find_if(catalog_.entries.begin(), catalog_.entries.end(),
                              [&](const LessonCatalog::Entry& x) { return x.id == lesson.id; });
        if (e == catalog_.entries.end()) {
            e = catalog_.entries.insert(catalog_.entries.end(), LessonCatalog::Entry{});
            e->id = lesson.id;
            e->order = lesson.order;
        }
        const std::string id = lesson.id, lang = lesson.lang;
        e->by_lang[lang] = std::move(lesson);
        preview_ = LessonPreview{f.name, std::move(text), id, false, false, {}};
        log(LogLine::Kind::Info, "previewing the dropped lesson " + f.name);
        if (lesson_ && lesson_->lesson().id == id) leave_lesson(); // opened again, fresh
        if (lang != lang_) set_lesson_lang(lang);
        open_lesson(id, 1);
    }
    if (taken.empty()) return;
    std::vector<platform::OpenedFile> rest;
    for (size_t k = 0; k < files.size(); ++k)
        if (!taken.count(k)) rest.push_back(std::move(files[k]));
    files = std::move(rest);
}

void App::check_preview() {
    LessonPreview& p = *preview_;
    auto reader = [this](const std::string& path) -> Result<std::vector<uint8_t>> {
        auto it = lesson_bytes_.find(path);
        if (it == lesson_bytes_.end()) return make_error(path, "not downloaded");
        return it->second;
    };
    CourseCheck c = check_lesson_text(p.file, p.text, reader);
    p.checked = true;
    p.ok = c.ok();
    p.notes = c.summary();
    log(p.ok ? LogLine::Kind::Info : LogLine::Kind::Warning,
        "lesson check " + p.file + ": " + p.notes);
    for (const CheckProblem& problem : c.problems) {
        p.notes += "\n" + problem.str();
        log(LogLine::Kind::Warning, problem.str());
    }
}

void App::apply_lesson(const Request& r) {
    switch (r.kind) {
    case Request::Kind::LessonOpen: {
        const Lesson* l = catalog_.find(r.text, lang_);
        if (!l) {
            log(LogLine::Kind::Warning, "no lesson " + r.text);
            return;
        }
        if (lesson_ && lesson_->lesson().id == r.text) {
            lesson_go(r.number);
            return;
        }
        pending_id_ = r.text;
        pending_step_ = r.number;
        // A course's graphs come from its folder first, then (as `pt2lab lesson check`
        // finds them, docs/LESSONS.md) from the page's own folder.
        for (const LessonGraph& g : l->graphs)
            if (!lesson_bytes_.count(g.path) && requested_.insert(g.path).second)
                platform::fetch_file(course_base_ + g.path, kLessonAsset + g.path);
        start_pending_lesson();
        return;
    }
    case Request::Kind::LessonLang: {
        if (!known_lang(r.text) || r.text == lang_) return;
        lang_ = r.text;
        platform::save_setting("lesson_lang", lang_);
        platform::set_page_language(lang_, web_words_json(lang_));
        if (lesson_) {
            const Lesson* l = catalog_.find(lesson_->lesson().id, lang_);
            if (l) {
                if (Status s = lesson_->switch_language(*l); !s.ok()) view_.error = s.error().str();
            }
            enter_step_text();
        }
        return;
    }
    case Request::Kind::LessonLeave: {
        if (!lesson_ && pending_id_.empty()) {
            followed_hash_.clear();
            return;
        }
        lesson_.reset();
        pending_id_.clear();
        view_.highlight.clear();
        view_.selected = 0;
        view_.error.clear();
        last_change_.reset();
        ++graph_epoch_;
        ++shown_serial_;
        if (ws_) view_.graph = ws_->has_program() ? GraphView::Program : GraphView::Module;
        for (Camera& c : view_.camera) c = Camera{};
        reset_modules();
        platform::set_text_view(text_view_json());
        // Leaving is a move of its own (Back returns to the step), unless Back did it.
        platform::set_url_hash(file_name_.empty() ? "" : "file=" + file_name_,
                               followed_hash_.empty());
        followed_hash_.clear();
        return;
    }
    default: break;
    }
    if (!lesson_) return;
    const std::string id = lesson_->lesson().id;
    switch (r.kind) {
    case Request::Kind::LessonGo: {
        int from = lesson_->step();
        bool had_button = !lesson_->current().actions.empty();
        bool was_performed = lesson_->performed();
        int k = std::clamp(r.number, 1, lesson_->step_count());
        if (k == from) {
            followed_hash_.clear();
            if (!link_notice_keep_) link_notice_.clear();
            link_notice_keep_ = false;
            platform::set_url_hash(lesson_->deep_link().substr(1)); // a clamped link: the real step
            platform::set_text_view(text_view_json());
            return;
        }
        // A step without a check counts as done once the learner moves on from it.
        if (k > from && lesson_->current().check.options.empty()) {
            LessonProgress& p = progress_[id];
            if (!p.is_done(from)) {
                mark_done(p, from);
                save_progress();
            }
        }
        if (k == from + 1 && had_button && !was_performed)
            log(LogLine::Kind::Info, "step " + std::to_string(from) +
                                         "'s button ran on the way (steps before the one "
                                         "shown are always done)");
        if (Status s = lesson_->go_to(k); !s.ok()) {
            view_.error = s.error().str();
            log(LogLine::Kind::Error, view_.error);
        }
        enter_step();
        return;
    }
    case Request::Kind::LessonPerform: {
        auto rep = lesson_->perform();
        if (!rep.ok()) {
            view_.error = rep.error().str();
            log(LogLine::Kind::Error, view_.error);
            return;
        }
        after_perform(rep.value());
        return;
    }
    case Request::Kind::LessonAnswer: {
        const Check& c = lesson_->current().check;
        if (r.number < 0 || r.number >= static_cast<int>(c.options.size())) return;
        view_.answer = r.number;
        LessonProgress& p = progress_[id];
        int k = lesson_->step();
        p.answers[k] = r.number;
        // The first answer is kept (retries cost: the lesson list counts first tries).
        p.first.emplace(k, r.number);
        // A step is done once its button ran and its check was answered right; an
        // answer before the button is a prediction, judged when it has run.
        if (r.number == c.answer && !check_is_prediction()) mark_done(p, k);
        save_progress();
        platform::set_text_view(text_view_json());
        return;
    }
    case Request::Kind::LessonReset: {
        progress_.erase(id);
        save_progress();
        if (Status s = lesson_->reset(); !s.ok()) view_.error = s.error().str();
        log(LogLine::Kind::Info, "lesson " + id + " reset: its graphs are opened afresh");
        enter_step();
        return;
    }
    default: return;
    }
}

std::pair<int, int> App::first_tries() const {
    if (!lesson_) return {0, 0};
    const LessonProgress& p = progress(lesson_->lesson().id);
    const std::vector<LessonStep>& steps = lesson_->lesson().steps;
    int right = 0, asked = 0;
    for (const auto& [step, opt] : p.first) {
        if (step < 1 || step > static_cast<int>(steps.size())) continue;
        const Check& c = steps[static_cast<size_t>(step - 1)].check;
        if (c.options.empty()) continue;
        ++asked;
        right += opt == c.answer;
    }
    return {right, asked};
}

bool App::check_is_prediction() const {
    return lesson_ && !lesson_->current().actions.empty() && !lesson_->performed();
}

void App::mark_done(LessonProgress& p, int step) {
    if (p.is_done(step)) return;
    p.done.insert(std::upper_bound(p.done.begin(), p.done.end(), step), step);
}

void App::after_perform(const LessonStepReport& rep) {
    // A prediction made before the button ran is judged now.
    if (lesson_) {
        const Check& c = lesson_->current().check;
        LessonProgress& p = progress_[lesson_->lesson().id];
        auto a = p.answers.find(lesson_->step());
        if (!c.options.empty() && a != p.answers.end() && a->second == c.answer) {
            mark_done(p, lesson_->step());
            save_progress();
        }
    }
    std::string torch;
    for (const LessonActionReport& a : rep.actions) {
        std::string s = a.summary;
        while (!s.empty() && s.back() == '\n') s.pop_back();
        log(LogLine::Kind::Action, a.graph + ": " + a.kind + ": " + s);
        if (!a.torch_error.empty())
            torch = strf(text(Str::torch_raises, lang_),
                         a.torch_error_type.empty() ? text(Str::an_error, lang_)
                                                    : a.torch_error_type.c_str(),
                         a.torch_error.c_str());
    }
    enter_step(false); // the same workspaces, moved by the step: the diff's ghosts stay
    if (torch.empty()) return;
    // A step that means to show what torch raises (its expect names the exception)
    // has it as its result, in the lesson panel, not as the page failing; any
    // other error torch raised in a lesson is a failure, in the banner.
    const std::string& expected = lesson_->current().expect.torch_error_kind;
    if (!expected.empty() && expected != "none") {
        log(LogLine::Kind::Info, torch);
        return;
    }
    view_.error = torch;
    log(LogLine::Kind::Warning, torch);
}

void App::enter_step(bool new_workspaces) {
    const LessonRunner& r = *lesson_;
    ++graph_epoch_;
    if (new_workspaces) {
        ++shown_serial_;
        note_graph_text(r.step_workspace()); // a teacher's graph may name things in any script
    }
    last_change_.reset();
    diff_since_ = -1;
    if (r.performed() && r.report() && !r.report()->diff.empty()) {
        ActionOutcome o;
        o.view = r.step_view();
        o.diff = r.report()->diff;
        o.changed = r.report()->changed;
        for (const LessonActionReport& a : r.report()->actions)
            o.summary += (o.summary.empty() ? "" : "; ") + a.kind;
        last_change_ = o;
        diff_since_ = platform::now_seconds();
    }
    view_.show_diff = true;
    view_.graph = r.step_view();
    view_.selected = r.selected_id();
    view_.highlight = r.highlight_ids();
    view_.error.clear();
    for (Camera& c : view_.camera) c = Camera{};
    for (Camera& c : view_.compare_camera) c = Camera{};
    reset_modules();
    // The first tab the step points at is selected; a second is drawn beside it.
    const std::vector<Tab> tabs = tabs_for(r.current().show);
    if (!tabs.empty()) show_tab(tabs[0]);
    view_.side_tab.reset();
    if (tabs.size() > 1) view_.side_tab = tabs[1];
    // A step the learner moved to is a history entry of its own (Back, Forward);
    // one a link led to replaces the link's entry.
    platform::set_url_hash(r.deep_link().substr(1), followed_hash_.empty());
    followed_hash_.clear();
    if (!link_notice_keep_) link_notice_.clear();
    link_notice_keep_ = false;
    enter_step_text();
}

void App::enter_step_text() {
    const LessonRunner& r = *lesson_;
    const LessonStep& st = r.current();
    auto answers = progress(r.lesson().id).answers;
    auto a = answers.find(st.index);
    view_.answer = a == answers.end() ? -1 : a->second;
    step_text_ = StepText{};
    auto prose = markdown_blocks(st.prose, r.lesson().file, st.line);
    if (prose.ok()) step_text_.prose = prose.take();
    auto after = markdown_blocks(st.after, r.lesson().file, st.line);
    if (after.ok()) step_text_.after = after.take();
    if (st.index == 1) {
        auto intro = markdown_blocks(r.lesson().intro, r.lesson().file, 1);
        if (intro.ok()) step_text_.intro = intro.take();
    }
    platform::set_text_view(text_view_json());
}

std::vector<App::CompareGraph> App::compare_graphs() const {
    std::vector<CompareGraph> out;
    if (!lesson_) return out;
    for (const std::string& key : lesson_->current().compare) {
        const Workspace* w = lesson_->workspace(key);
        if (!w) continue;
        GraphView v = lesson_->current().view == "program" && w->has_program() ? GraphView::Program
                                                                               : GraphView::Module;
        out.push_back({key, w, v});
    }
    return out;
}

const Scene& App::compare_scene(size_t index) const {
    std::vector<CompareGraph> g = compare_graphs();
    PT2LAB_CHECK(index < g.size());
    if (compare_scenes_.size() <= index) compare_scenes_.resize(index + 1);
    SceneCache& c = compare_scenes_[index];
    if (c.valid && c.shown == shown_serial_ && c.epoch == graph_epoch_) return c.scene;
    SceneContext ctx;
    const Workspace& w = *g[index].ws;
    if (g[index].view == GraphView::Program) ctx.signature = &w.program().signature;
    if (g[index].view == GraphView::Module) ctx.submodules = &w.module().submodules;
    c.scene = build_scene(w.graph(g[index].view), ctx, metrics_, nullptr, nullptr);
    c.shown = shown_serial_;
    c.epoch = graph_epoch_;
    c.valid = true;
    return c.scene;
}

std::string App::text_view_json() const {
    if (!lesson_) {
        if (link_notice_.empty()) return "";
        json j = {{"lang", lang_}, {"notice", link_notice_}};
        return j.dump(-1, ' ', false, json::error_handler_t::replace);
    }
    const LessonRunner& r = *lesson_;
    const LessonStep& st = r.current();
    json j = {{"notice", link_notice_},
              {"lesson", r.lesson().id},
              {"lang", lang_},
              {"title", r.lesson().title},
              {"step", r.step()},
              {"steps", r.step_count()},
              {"step_title", st.title},
              {"link", r.deep_link()},
              {"intro", blocks_json(step_text_.intro)},
              {"prose", blocks_json(step_text_.prose)},
              {"button", st.button},
              {"performed", r.performed()},
              {"quiz", st.is_quiz}};
    if (const Lesson* next = next_lesson())
        j["next_lesson"] = {{"id", next->id}, {"title", next->title}};
    if (st.actions.empty() || r.performed()) j["after"] = blocks_json(step_text_.after);
    if (const auto& rep = r.report(); rep && r.performed()) {
        json results = json::array();
        for (const LessonActionReport& a : rep->actions) {
            std::string summary = a.summary;
            while (!summary.empty() && summary.back() == '\n') summary.pop_back();
            json o = {{"graph", a.graph},
                      {"kind", a.kind},
                      {"summary", summary},
                      {"changed", a.changed},
                      {"torch_error_type", a.torch_error_type},
                      {"torch_error", a.torch_error}};
            if (a.run && !a.run->parity.outputs.empty())
                o["parity"] = {{"verdict", ui::parity_word(a.run->parity, lang_)},
                               {"max_abs", a.run->parity.max_abs()},
                               {"outputs", a.run->parity.outputs.size()}};
            results.push_back(o);
        }
        const GraphDiff& d = rep->diff;
        j["results"] = results;
        if (auto c = compare_step_runs(*rep))
            j["runs_compared"] = {
                {"runs", c->runs}, {"bit_identical", c->bit_identical}, {"max_abs", c->max_abs}};
        j["diff"] = {{"added", d.added},
                     {"removed", d.removed},
                     {"rewired", d.rewired},
                     {"changed", d.changed}};
    }
    j["graph"] = graph_description_json();
    if (!st.check.options.empty()) {
        json opts = json::array();
        for (const CheckOption& o : st.check.options) opts.push_back(o.text);
        json c = {{"question", st.check.question},
                  {"options", opts},
                  {"chosen", view_.answer},
                  {"predicted", view_.answer >= 0 && check_is_prediction()}};
        if (view_.answer >= 0 && !check_is_prediction()) {
            LessonCheckResult res = r.check_answer(view_.answer);
            c["correct"] = res.correct;
            c["feedback"] = res.feedback;
        }
        j["check"] = c;
    }
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The step's graph in words for the text view: which graph and view, how many
// nodes of each kind, the ops its call_function nodes call (in graph order, with
// counts), the highlighted nodes and whether lint passes.
nlohmann::json App::graph_description_json() const {
    const LessonRunner& r = *lesson_;
    const Workspace& ws = r.step_workspace();
    GraphView v = r.step_view();
    const Graph& g = ws.graph(v);
    json kinds = json::object();
    std::vector<std::pair<std::string, int>> ops;
    for (const Node* n : g.nodes()) {
        std::string k(op_name(n->op()));
        kinds[k] = kinds.value(k, 0) + 1;
        if (n->op() != Op::CallFunction && n->op() != Op::CallModule) continue;
        std::string t = n->op() == Op::CallModule ? "module " + n->target() : target_str(*n);
        auto it = std::find_if(ops.begin(), ops.end(), [&](const auto& p) { return p.first == t; });
        if (it == ops.end())
            ops.emplace_back(t, 1);
        else
            ++it->second;
    }
    json op_list = json::array();
    for (const auto& [t, c] : ops) op_list.push_back({{"op", t}, {"count", c}});
    json highlight = json::array();
    for (uint32_t id : view_.highlight)
        if (const Node* n = ws.node(v, id)) highlight.push_back(n->name());
    return {{"key", r.current().graph},
            {"view", v == GraphView::Program ? "ExportedProgram" : "ep.module()"},
            {"nodes", g.size()},
            {"kinds", kinds},
            {"ops", op_list},
            {"highlight", highlight},
            {"lint", ws.lint_message(v)}};
}

} // namespace pt2lab::app
