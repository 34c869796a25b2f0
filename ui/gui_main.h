#pragma once
// The window's entry point, called by main() when `mtdesk` runs without a command (and a display
// is there) or as `mtdesk gui [options]`.

namespace mtdesk::ui {

/// True when a window can be shown: $DISPLAY or $WAYLAND_DISPLAY is set and QT_QPA_PLATFORM does
/// not ask for an invisible platform (offscreen, minimal).
bool display_available();

/// Runs the application window; returns the exit code. argv[1] may be "gui" (then its options
/// follow: --model DIR, --language en|zh_CN, --screenshots DIR [--text TEXT]).
int run_gui(int argc, char** argv);

/// Makes the embedded resources (icon) available; run_gui calls it, tests may.
void init_resources();

}  // namespace mtdesk::ui
