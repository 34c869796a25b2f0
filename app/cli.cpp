#include "cli.h"

#include <cstdio>

namespace mtdesk::app {

int run_cli(int, char**) {
    std::fputs("mtdesk: command line not implemented yet\n", stderr);
    return 2;
}

}  // namespace mtdesk::app
