// App's Save .pt2: the workspace writes the current program, the browser
// downloads it. Nothing in the page models the program: Workspace::save_pt2 does.
#include <cstring>

#include "app.h"
#include "io/pt2_writer.h"
#include "platform/platform.h"

namespace pt2lab::app {

std::string App::save_name() const {
    std::string stem = file_name();
    for (const char* ext : {".pt2", ".json"}) {
        const size_t n = std::strlen(ext);
        if (stem.size() > n && stem.compare(stem.size() - n, n, ext) == 0)
            stem.resize(stem.size() - n);
    }
    if (stem.empty()) stem = "model";
    // The last change that made a different program names it: conv_relu.converted.pt2,
    // conv_relu.core_aten.pt2 (as tools/export_goldens.py names torch's decompositions).
    const Workspace* ws = workspace();
    const auto undo = ws ? ws->undo_history() : std::vector<HistoryEntry>{};
    for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
        const char* word = nullptr;
        switch (it->kind) {
        case Action::Kind::Decompose:
            word = ws->level() == IrLevel::CoreAten ? "core_aten" : "inference";
            break;
        case Action::Kind::Convert: word = "converted"; break;
        case Action::Kind::Prepare: word = "prepared"; break;
        case Action::Kind::Edit:
        case Action::Kind::DecomposeNode:
        case Action::Kind::FoldConvBn:
        case Action::Kind::InsertObserver: word = "edited"; break;
        case Action::Kind::Calibrate:
        case Action::Kind::Run:
        case Action::Kind::SetTraining: break;
        }
        if (word) return stem + "." + word + ".pt2";
    }
    return stem + ".pt2";
}

void App::save_file() {
    const Workspace* ws = workspace();
    if (!ws) return;
    const std::string name = save_name();
    auto bytes = ws->save_pt2(archive_root_for(name));
    if (!bytes.ok()) {
        view_.error = bytes.error().str();
        log(LogLine::Kind::Error, "save: " + view_.error);
        return;
    }
    platform::download_file(name, bytes.value());
    log(LogLine::Kind::Info, "saved " + name + " (" + std::to_string(bytes.value().size()) +
                                 " bytes): torch.export.load reads it");
}

} // namespace pt2lab::app
