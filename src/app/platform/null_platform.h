// Controls of the headless platform (null_platform.cpp): where its files come
// from and what the app did with the clipboard, the URL hash and the screen.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "platform/platform.h"

namespace pt2lab::app::platform {

// Forgets everything; fetch_file(url) then reads site_root/url.
void null_platform_reset(const std::string& site_root);
// preloaded(name) returns the bytes of `path`.
void null_platform_map(const std::string& name, const std::string& path);
void null_platform_set_start(const std::string& name);
// url_option(name) returns value (until the next reset).
void null_platform_set_option(const std::string& name, const std::string& value);
const std::string& null_platform_clipboard();
const std::string& null_platform_hash();
// The learner picks (or drops) a file: it arrives through take_opened().
void null_platform_pick(const std::string& name, std::vector<uint8_t> bytes);
// The learner changes the URL hash (a hashchange event).
void null_platform_change_hash(const std::string& hash);
// navigator.language as browser_language() returns it ("" until set: unknown).
void null_platform_set_browser_language(const std::string& lang);
// What the app last gave set_page_language: the language and the HTML's words (JSON).
const std::string& null_platform_page_language();
const std::string& null_platform_page_words();
// What the app last gave the text view, and whether it is shown.
const std::string& null_platform_text_view();
bool null_platform_text_view_shown();
// A text view control is used (the app takes it with take_text_view_commands()).
void null_platform_text_view_command(TextViewCommand c);
// How many set_url_hash calls added a history entry (a step the learner moved to).
int null_platform_hash_entries();
const std::string& null_platform_fatal();
bool null_platform_first_frame();
// Files the browser is reading (file_reads() returns them until cancelled or replaced),
// and how many times cancel_file_reads() found some to cancel.
void null_platform_set_reads(std::vector<FileRead> reads);
// A big .pt2 arrives before its `late` ranges (OpenedFile::shared / late): the app
// sees a late FileRead for it until null_platform_late_read_done (or its cancel).
void null_platform_pick_early(const std::string& name,
                              std::shared_ptr<const std::vector<uint8_t>> buffer,
                              std::vector<ByteRange> late);
// The late ranges of that buffer are in (error "") or could not be read.
void null_platform_late_read_done(const void* buffer, const std::string& error);
int null_platform_reads_cancelled();
// The browser's tasks between frames: while armed (wake_between_frames, or the last
// task asked for another), runs the task, at most max_tasks times; returns how many ran.
int null_platform_between_frames(int max_tasks);
// The downloads the app made (download_file), oldest first.
struct NullDownload {
    std::string name;
    std::vector<uint8_t> bytes;
};
const std::vector<NullDownload>& null_platform_downloads();
// What the app's state provider returns now.
std::string null_platform_state();

} // namespace pt2lab::app::platform
