#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "cli.h"
#include "gui_main.h"
#include "mtdesk/cpu/blas_kernels.h"

namespace {

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
    // On a VM that hides the CPU model OpenBLAS falls back to SSE3 kernels: start over once
    // with OPENBLAS_CORETYPE set so the CPU engine uses AVX2/AVX-512.
    mtdesk::restart_with_better_blas_kernels(argv);
    const bool gui_command = argc >= 2 && std::string_view(argv[1]) == "gui";
    if (gui_command || (argc < 2 && mtdesk::ui::display_available()))
        return mtdesk::ui::run_gui(argc, argv);
    return mtdesk::app::run_cli(argc, argv);
}
