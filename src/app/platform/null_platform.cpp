// The page's platform seams for headless native runs (like Dear ImGui's
// example_null): files come from a folder, the clipboard and settings are
// kept in memory, nothing is displayed. Used by tests/app's UI smoke test.
#include <algorithm>
#include <chrono>
#include <map>

#include "io/program_loader.h"
#include "platform/null_platform.h"
#include "platform/platform.h"

namespace pt2lab::app::platform {
namespace {

struct NullState {
    std::map<std::string, std::string> files; // preloaded name -> path on disk
    std::string root;                         // fetch_file() reads root + url
    std::string start;
    std::vector<OpenedFile> arrived;
    std::string clipboard, hash, fatal;
    std::string hash_change, text_view;
    std::string browser_lang, page_lang, page_words; // browser_language(); set_page_language()
    bool text_view_shown = false;
    std::vector<TextViewCommand> text_view_commands;
    int hash_entries = 0; // set_url_hash calls that added a history entry
    std::map<std::string, std::string> settings;
    std::map<std::string, std::string> options; // URL options
    std::function<std::string()> state;
    bool first_frame = false;
    std::function<bool()> between; // set_between_frames
    std::vector<FileRead> reads;   // null_platform_set_reads
    int reads_cancelled = 0;
    std::vector<LateReadDone> late_done; // take_late_reads_done
    bool between_armed = false;
    std::vector<NullDownload> downloads;
};

NullState& st() {
    static NullState s;
    return s;
}

std::vector<uint8_t> read(const std::string& path) {
    auto b = read_file_bytes(path);
    return b.ok() ? b.take() : std::vector<uint8_t>{};
}

} // namespace

void null_platform_reset(const std::string& site_root) {
    st() = NullState{};
    st().root = site_root;
}
void null_platform_map(const std::string& name, const std::string& path) {
    st().files[name] = path;
}
void null_platform_set_start(const std::string& name) {
    st().start = name;
}
const std::string& null_platform_clipboard() {
    return st().clipboard;
}
const std::string& null_platform_hash() {
    return st().hash;
}
void null_platform_change_hash(const std::string& hash) {
    st().hash = hash;
    st().hash_change = hash;
}
void null_platform_set_browser_language(const std::string& lang) {
    st().browser_lang = lang;
}
const std::string& null_platform_page_language() {
    return st().page_lang;
}
const std::string& null_platform_page_words() {
    return st().page_words;
}
const std::string& null_platform_text_view() {
    return st().text_view;
}
bool null_platform_text_view_shown() {
    return st().text_view_shown;
}
void null_platform_text_view_command(TextViewCommand c) {
    st().text_view_commands.push_back(c);
}
int null_platform_hash_entries() {
    return st().hash_entries;
}
const std::vector<NullDownload>& null_platform_downloads() {
    return st().downloads;
}
const std::string& null_platform_fatal() {
    return st().fatal;
}
bool null_platform_first_frame() {
    return st().first_frame;
}
std::string null_platform_state() {
    return st().state ? st().state() : std::string();
}

bool poll_display(Display& d) {
    if (d.fb_w == 1280 && d.fb_h == 800) return false;
    d = Display{1280, 800, 1.0f, 1280, 800};
    return true;
}

void install_wheel_input() {
}

void install_text_input() {
}

std::vector<uint8_t> preloaded(const std::string& name) {
    auto it = st().files.find(name);
    return it == st().files.end() ? std::vector<uint8_t>{} : read(it->second);
}

std::string start_file() {
    return st().start;
}

void open_file_picker() {
}

void null_platform_pick(const std::string& name, std::vector<uint8_t> bytes) {
    OpenedFile f;
    f.name = name;
    f.bytes = std::move(bytes);
    st().arrived.push_back(std::move(f));
    wake_between_frames(); // as web_files.cpp: the open begins in the next task
}

void fetch_file(const std::string& url, const std::string& name) {
    OpenedFile f;
    f.name = name;
    f.bytes = read(st().root + "/" + url);
    if (f.bytes.empty()) f.error = "could not read " + url;
    st().arrived.push_back(std::move(f));
}

std::vector<OpenedFile> take_opened() {
    std::vector<OpenedFile> out;
    out.swap(st().arrived);
    return out;
}

void set_clipboard(const std::string& text) {
    st().clipboard = text;
}

void download_file(const std::string& name, const std::vector<uint8_t>& bytes) {
    st().downloads.push_back({name, bytes});
}

void set_url_hash(const std::string& hash, bool new_entry) {
    if (new_entry && hash != st().hash) ++st().hash_entries;
    st().hash = hash;
}

std::string url_hash() {
    return st().hash;
}

std::string take_hash_change() {
    std::string h;
    h.swap(st().hash_change);
    return h;
}

std::string browser_language() {
    return st().browser_lang;
}

void set_page_language(const std::string& lang, const std::string& words_json) {
    st().page_lang = lang;
    st().page_words = words_json;
}

void set_text_view(const std::string& json) {
    st().text_view = json;
}

void toggle_text_view() {
    st().text_view_shown = !st().text_view_shown;
}

std::vector<TextViewCommand> take_text_view_commands() {
    std::vector<TextViewCommand> out;
    out.swap(st().text_view_commands);
    return out;
}

// Headless: no browser focus; the canvas keeps it.
bool canvas_focused() {
    return true;
}

int take_focus_entry() {
    return 0;
}

void focus_page(int) {
}

std::string load_setting(const std::string& key) {
    auto it = st().settings.find(key);
    return it == st().settings.end() ? std::string() : it->second;
}

std::string url_option(const std::string& name) {
    auto it = st().options.find(name);
    return it == st().options.end() ? std::string() : it->second;
}

void null_platform_set_option(const std::string& name, const std::string& value) {
    st().options[name] = value;
}

void set_bench_provider(std::function<std::string()>) {
}

void save_setting(const std::string& key, const std::string& value) {
    st().settings[key] = value;
}

void run_main_loop(std::function<void()> frame) {
    frame(); // headless: one frame; tests call the frame function themselves
}

std::vector<FileRead> file_reads() {
    return st().reads;
}

void cancel_file_reads() {
    auto& r = st().reads;
    auto late = std::stable_partition(r.begin(), r.end(), [](const FileRead& f) { return f.late; });
    if (late != r.end()) ++st().reads_cancelled;
    r.erase(late, r.end());
}

void null_platform_late_read_done(const void* buffer, const std::string& error) {
    auto& r = st().reads;
    r.erase(std::remove_if(r.begin(), r.end(),
                           [&](const FileRead& f) { return f.late && f.buffer == buffer; }),
            r.end());
    st().late_done.push_back({buffer, error});
}

void cancel_late_read(const void* buffer) {
    for (const FileRead& f : st().reads)
        if (f.late && f.buffer == buffer) {
            null_platform_late_read_done(buffer, "cancelled");
            return;
        }
}

std::vector<LateReadDone> take_late_reads_done() {
    std::vector<LateReadDone> out;
    out.swap(st().late_done);
    return out;
}

void null_platform_pick_early(const std::string& name,
                              std::shared_ptr<const std::vector<uint8_t>> buffer,
                              std::vector<ByteRange> late) {
    uint64_t total = 0;
    for (const ByteRange& r : late) total += r.end - r.begin;
    FileRead read;
    read.name = name;
    read.total = total;
    read.late = true;
    read.buffer = buffer->data();
    st().reads.push_back(read);
    OpenedFile f;
    f.name = name;
    f.shared = std::move(buffer);
    f.late = std::move(late);
    st().arrived.push_back(std::move(f));
    wake_between_frames();
}

void null_platform_set_reads(std::vector<FileRead> reads) {
    st().reads = std::move(reads);
}

int null_platform_reads_cancelled() {
    return st().reads_cancelled;
}

void set_between_frames(std::function<bool()> task) {
    st().between = std::move(task);
}

void wake_between_frames() {
    st().between_armed = true;
}

int null_platform_between_frames(int max_tasks) {
    int n = 0;
    while (st().between_armed && n < max_tasks) {
        st().between_armed = false;
        ++n;
        if (st().between && st().between()) st().between_armed = true;
    }
    return n;
}

void set_state_provider(std::function<std::string()> provider) {
    st().state = std::move(provider);
}

void first_frame_drawn() {
    st().first_frame = true;
}

void fatal(const std::string& message) {
    st().fatal = message;
}

double now_seconds() {
    static const auto t0 = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace pt2lab::app::platform
