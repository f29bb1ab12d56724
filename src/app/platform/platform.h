// The page's seams to the browser (display, input, files, clipboard, URL hash,
// localStorage, main loop, test hook): one small web_*.cpp each, JS in web/.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/zip.h"

namespace pt2lab::app::platform {

// --- display (web_display.cpp) ---------------------------------------------
struct Display {
    double css_w = 0, css_h = 0; // the canvas in CSS pixels
    float dpr = 1;               // devicePixelRatio
    int fb_w = 0, fb_h = 0;      // backing store in device pixels (css * dpr)
};
// Reads the canvas size and devicePixelRatio; when either changed, resizes the
// backing store to css * dpr (this emscripten's GLFW ignores devicePixelRatio)
// and returns true.
bool poll_display(Display& d);

// --- input (web_input.cpp) ------------------------------------------------------
// Takes the mouse wheel and trackpad pinch from the canvas (after ImGui's
// GLFW backend is initialised; it replaces the backend's document listener).
void install_wheel_input();
// Typed characters to ImGui as whole code points (replaces the backend's GLFW
// character callback; after it is initialised, with the window's context current).
void install_text_input();

// --- files (web_files.cpp) ---------------------------------------------------
struct OpenedFile {
    std::string name;
    std::vector<uint8_t> bytes;
    std::string error; // the browser could not read or fetch it ("" when bytes are valid)
    // A big .pt2 that arrives before its weights: `shared` holds the file's bytes but
    // for its `late` ranges (zip_late_ranges), which the browser is still reading into
    // it (they end with take_late_reads_done()); `bytes` is then empty.
    std::shared_ptr<const std::vector<uint8_t>> shared;
    std::vector<pt2lab::ByteRange> late;
};
// A file the loader fetched before main() ran (fonts, the first graph); empty when absent.
std::vector<uint8_t> preloaded(const std::string& name);
// The graph the page opens first ("conv_bn_relu_eval.pt2"), chosen by the loader from the URL.
std::string start_file();
// Opens the browser's file picker; the chosen file arrives through take_opened().
void open_file_picker();
// Fetches a file of the site (a relative URL); it arrives through take_opened().
void fetch_file(const std::string& url, const std::string& name);
// Files that arrived (picked, dropped, fetched) since the last call, in order.
std::vector<OpenedFile> take_opened();
// A picked or dropped file the browser is still reading into the page (it arrives
// through take_opened() when whole): its name and bytes read of its size.
struct FileRead {
    std::string name;
    uint64_t done = 0, total = 0;
    // The late ranges of a file that arrived already (OpenedFile::late): `buffer` is
    // its OpenedFile::shared->data(), done / total count the late bytes.
    bool late = false;
    const void* buffer = nullptr;
};
std::vector<FileRead> file_reads();
// Stops every read in flight but the late ones; their files never arrive.
void cancel_file_reads();
// The late ranges of the file whose buffer this is: stops reading them (they end, as
// cancelled, through take_late_reads_done()). The buffer stays valid meanwhile.
void cancel_late_read(const void* buffer);
// Late reads that ended since the last call: all their bytes are in (error ""), or
// the browser could not read them, or they were cancelled.
struct LateReadDone {
    const void* buffer = nullptr;
    std::string error;
};
std::vector<LateReadDone> take_late_reads_done();
// Hands `bytes` to the browser as a download named `name` (web_download.cpp: a Blob
// and an <a download> click); nothing leaves the machine.
void download_file(const std::string& name, const std::vector<uint8_t>& bytes);

// --- clipboard (web_clipboard.cpp) -------------------------------------------
void set_clipboard(const std::string& text);

// --- URL hash and localStorage (web_storage.cpp) -----------------------------
// Without '#'. Replaces the current history entry, or with new_entry (a lesson
// step the learner moved to) adds one, so Back and Forward walk the steps.
void set_url_hash(const std::string& hash, bool new_entry = false);
// The URL hash without '#' ("m00-4/3"), as the page was opened.
std::string url_hash();
// The new hash when the learner changed it (a link, the address bar, back) since
// the last call, else "". set_url_hash's own changes do not count.
std::string take_hash_change();
// A page URL option (?name=value or #name=value; the query wins), "" when absent:
// file, step, hide, collapse, bench (docs/EMBEDDING.md).
std::string url_option(const std::string& name);
std::string load_setting(const std::string& key);
void save_setting(const std::string& key, const std::string& value);

// --- the page's language (web_language.cpp) -----------------------------------
// The browser's preferred language (navigator.language, "zh-TW", "en-US"), "" when unknown.
std::string browser_language();
// The page's language changed (or was chosen at start): `lang` ("zh-TW", "en") and
// the words its HTML shows (page_strings.h web_words_json). Sets the document's lang,
// title and index.html's own controls; the text view takes its words from them.
void set_page_language(const std::string& lang, const std::string& words_json);

// --- lesson text view (web_text_view.cpp) ------------------------------------
// The current lesson step as real HTML text beside the canvas (web/text_view.js),
// for screen readers, find and copy: `json` is the step (title, blocks, check,
// feedback; App::text_view_json), "" when no lesson is open.
void set_text_view(const std::string& json);
// Shows or hides the text view (its own HTML button does the same).
void toggle_text_view();
// What the text view's controls asked for since the last call, in order: the
// step's button, go to a step, answer the check (the app does it as if its own
// panel had been used).
struct TextViewCommand {
    enum class Kind { Perform, Go, Answer, NextLesson } kind = Kind::Perform;
    int number = 0; // Go: the step (from 1); Answer: the option (from 0)
};
std::vector<TextViewCommand> take_text_view_commands();

// --- keyboard focus between the canvas and the HTML (web_focus.cpp) -----------
// Whether the canvas has the browser's focus (keys reach the app).
bool canvas_focused();
// Tab moved focus into the canvas since the last call (main.cpp polls it): +1 from the HTML before
// it (start at the first control), -1 from the HTML after it (the last), 0 not.
int take_focus_entry();
// Hands focus to the page's HTML: the next focusable element after the canvas
// (dir > 0) or the one before it (dir < 0).
void focus_page(int dir);

// --- main loop (web_main_loop.cpp) -------------------------------------------
// Calls frame() once per display refresh, forever; returns only in native builds.
void run_main_loop(std::function<void()> frame);
// Work between frames: task() runs in the browser's own short tasks (a
// MessageChannel message, so no timer clamp) for as long as it returns true; input,
// drawing and every other task run between two calls. The main loop arms it after a
// frame that left work; arming it while it runs does nothing. A no-op in native builds.
void set_between_frames(std::function<bool()> task);
void wake_between_frames();

// --- test hook and loader (web_state_hook.cpp) -------------------------------
// What window.pt2lab.state() returns (JSON text), computed when asked.
void set_state_provider(std::function<std::string()> provider);
// What window.pt2lab.bench() returns (small JSON: frame times, open timings).
void set_bench_provider(std::function<std::string()> provider);
// Tells the loader the first interactive frame is on screen (hides the loading bar).
void first_frame_drawn();
// Replaces the page with a readable error screen (e.g. no WebGL2).
void fatal(const std::string& message);
// Seconds since the page started, for the log.
double now_seconds();

} // namespace pt2lab::app::platform
