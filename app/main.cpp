#include <fcntl.h>
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

// A standard descriptor that was closed (`mtdesk translate <&-`) would be handed to the next
// file opened, and a model file or an eventfd would then be read as stdin or written as stdout:
// /dev/null is opened read-only in its place: stdin reads as empty, and writing to stdout or
// stderr still fails with EBADF, as on a closed descriptor.
void open_closed_standard_descriptors() {
    for (int fd = 0; fd <= 2; ++fd) {
        if (fcntl(fd, F_GETFD) != -1) continue;
        const int null_fd = open("/dev/null", O_RDONLY);
        if (null_fd >= 0 && null_fd != fd) {
            dup2(null_fd, fd);
            close(null_fd);
        }
    }
}

}  // namespace

// Without a command (and with a display) mtdesk opens its window; `mtdesk gui` always tries to.
// Every other command is the headless command line, which needs no display.
int main(int argc, char** argv) {
    open_closed_standard_descriptors();
    restart_with_faster_blas_kernels(argv);
    const bool gui_command = argc >= 2 && std::string_view(argv[1]) == "gui";
    if (gui_command || (argc < 2 && mtdesk::ui::display_available()))
        return mtdesk::ui::run_gui(argc, argv);
    return mtdesk::app::run_cli(argc, argv);
}
