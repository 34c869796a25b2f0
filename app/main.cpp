#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "cli.h"
#include "gui_main.h"
#include "mtdesk/cpu/blas_kernels.h"

namespace {

// OpenBLAS chooses its kernels when it loads; on a VM that hides the CPU model it falls back to
// SSE3 kernels. Start over once with OPENBLAS_CORETYPE set so the CPU engine uses AVX2/AVX-512.
void restart_with_faster_blas_kernels(char** argv) {
    const auto coretype = mtdesk::better_blas_coretype();
    if (!coretype || std::getenv("MTDESK_BLAS_RESTARTED")) return;
    setenv("OPENBLAS_CORETYPE", coretype->c_str(), 1);
    setenv("MTDESK_BLAS_RESTARTED", "1", 1);
    execv("/proc/self/exe", argv);  // returns only on failure: then carry on as we are
}

}  // namespace

// Without a command (and with a display) mtdesk opens its window; `mtdesk gui` always tries to.
// Every other command is the headless command line, which needs no display.
int main(int argc, char** argv) {
    restart_with_faster_blas_kernels(argv);
    const bool gui_command = argc >= 2 && std::string_view(argv[1]) == "gui";
    if (gui_command || (argc < 2 && mtdesk::ui::display_available()))
        return mtdesk::ui::run_gui(argc, argv);
    return mtdesk::app::run_cli(argc, argv);
}
