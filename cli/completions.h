// Shell completion scripts made from the command line's own definitions (CLI11's app), so that
// they offer exactly the commands and flags the binary takes.
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

namespace faultline {

// The hidden `completions SHELL` command of `app`; the shell asked for goes to `shell`.
CLI::App* add_completions_command(CLI::App* app, std::string* shell);

// The completion script for `shell` (bash, zsh or fish) of `app`, its commands and flags, the
// hidden ones left out.
void write_completions(const CLI::App& app, const std::string& shell, std::ostream& out);

}  // namespace faultline
