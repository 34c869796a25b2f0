#include <string_view>

#include "cli.h"
#include "gui_main.h"

// Without a command (and with a display) mtdesk opens its window; `mtdesk gui` always tries to.
// Every other command is the headless command line, which needs no display.
int main(int argc, char** argv) {
    const bool gui_command = argc >= 2 && std::string_view(argv[1]) == "gui";
    if (gui_command || (argc < 2 && mtdesk::ui::display_available()))
        return mtdesk::ui::run_gui(argc, argv);
    return mtdesk::app::run_cli(argc, argv);
}
