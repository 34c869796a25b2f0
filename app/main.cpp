#include "cli.h"

int main(int argc, char** argv) {
    return mtdesk::app::run_cli(argc, argv);
}
