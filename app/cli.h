#pragma once

namespace mtdesk::app {

/// Entry point of the `mtdesk` executable: parses the subcommand and runs it.
/// Returns the process exit code.
int run_cli(int argc, char** argv);

}  // namespace mtdesk::app
