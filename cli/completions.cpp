#include "cli/completions.h"

#include <string_view>
#include <vector>

namespace faultline {
namespace {

struct Flag {
  std::vector<std::string> names;  // "-j", "--jobs"
  std::string description;
  bool takes_value = false;
  std::vector<std::string> choices;  // the values an IsMember check allows, else none
};

struct Command {
  std::string path;  // "signatures list"; "" for faultline itself
  std::vector<const CLI::App*> subcommands;
  std::vector<Flag> flags;
};

// The values of an IsMember check, which CLI11 shows in the type name: "TEXT:{text,json}".
std::vector<std::string> choices_of(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  const size_t open = type.rfind('{');
  const size_t close = type.rfind('}');
  std::vector<std::string> choices;
  if (open == std::string::npos || close == std::string::npos || close < open) return choices;
  std::string_view list = std::string_view(type).substr(open + 1, close - open - 1);
  while (!list.empty()) {
    const size_t comma = list.find(',');
    choices.emplace_back(list.substr(0, comma));
    list = comma == std::string_view::npos ? "" : list.substr(comma + 1);
  }
  return choices;
}

// `app` and the commands under it, depth first, the hidden ones (no group) left out.
void collect(const CLI::App& app, const std::string& path, std::vector<Command>* commands) {
  Command command{path, {}, {}};
  for (const CLI::Option* option : app.get_options()) {
    Flag flag;
    for (const std::string& name : option->get_snames()) flag.names.push_back("-" + name);
    for (const std::string& name : option->get_lnames()) flag.names.push_back("--" + name);
    if (flag.names.empty()) continue;  // a positional argument
    flag.description = option->get_description();
    flag.takes_value = option->get_expected_max() > 0;  // a flag expects none
    if (flag.takes_value) flag.choices = choices_of(*option);
    command.flags.push_back(std::move(flag));
  }
  command.subcommands =
      app.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); });
  commands->push_back(command);
  for (const CLI::App* sub : command.subcommands) {
    collect(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), commands);
  }
}

std::vector<Command> commands_of(const CLI::App& app) {
  std::vector<Command> commands;
  collect(app, "", &commands);
  return commands;
}

// `text` in single quotes for bash and zsh.
std::string sh_quote(std::string_view text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `text` in single quotes for fish, where a backslash escapes a quote or a backslash.
std::string fish_quote(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : " ") + word;
  return out;
}

std::string flag_names(const Command& command) {
  std::vector<std::string> names;
  for (const Flag& flag : command.flags)
    names.insert(names.end(), flag.names.begin(), flag.names.end());
  return joined(names);
}

std::string subcommand_names(const Command& command) {
  std::vector<std::string> names;
  for (const CLI::App* sub : command.subcommands) names.push_back(sub->get_name());
  return joined(names);
}

// The `case` arms, shared by bash and zsh, that follow the command words typed so far: "$command/
// $word" names a command under the one found so far.
void write_command_walk(const std::vector<Command>& commands, std::ostream& out) {
  for (const Command& command : commands) {
    for (const CLI::App* sub : command.subcommands) {
      const std::string path =
          command.path.empty() ? sub->get_name() : command.path + " " + sub->get_name();
      out << "      " << sh_quote(command.path + "/" + sub->get_name())
          << ") command=" << sh_quote(path) << " ;;\n";
    }
  }
}

enum class Shell { kBash, kZsh };

// The `case` arms, shared by bash and zsh, for the word after a flag that takes a value: its
// choices, else file names.
void write_value_arms(const std::vector<Command>& commands, Shell shell, std::ostream& out) {
  for (const Command& command : commands) {
    for (const Flag& flag : command.flags) {
      if (!flag.takes_value) continue;
      std::string patterns;
      for (const std::string& name : flag.names) {
        patterns += (patterns.empty() ? "" : "|") + sh_quote(command.path + "/" + name);
      }
      out << "    " << patterns << ") ";
      if (shell == Shell::kBash) {
        // With no reply, `complete -o default` offers file names.
        if (!flag.choices.empty()) {
          out << "mapfile -t COMPREPLY < <(compgen -W " << sh_quote(joined(flag.choices))
              << " -- \"$cur\"); ";
        }
      } else if (flag.choices.empty()) {
        out << "_files; ";
      } else {
        out << "compadd --";
        for (const std::string& choice : flag.choices) out << " " << sh_quote(choice);
        out << "; ";
      }
      out << "return ;;\n";
    }
  }
}

void write_bash(const std::vector<Command>& commands, std::ostream& out) {
  out << "# bash completion for faultline; generated by `faultline completions bash`.\n"
         "_faultline() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} command='' i\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    case \"$command/${COMP_WORDS[i]}\" in\n";
  write_command_walk(commands, out);
  out << "    esac\n"
         "  done\n"
         "  COMPREPLY=()\n"
         "  case \"$command/$prev\" in\n";
  write_value_arms(commands, Shell::kBash, out);
  out << "  esac\n"
         "  local commands='' flags=''\n"
         "  case $command in\n";
  for (const Command& command : commands) {
    out << "    " << sh_quote(command.path) << ") commands=" << sh_quote(subcommand_names(command))
        << " flags=" << sh_quote(flag_names(command)) << " ;;\n";
  }
  out << "  esac\n"
         "  if [[ $cur == -* ]]; then\n"
         "    mapfile -t COMPREPLY < <(compgen -W \"$flags\" -- \"$cur\")\n"
         "  elif [[ -n $commands ]]; then\n"
         "    mapfile -t COMPREPLY < <(compgen -W \"$commands\" -- \"$cur\")\n"
         "  fi\n"
         "}\n"
         "complete -o default -F _faultline faultline\n";
}

void write_zsh(const std::vector<Command>& commands, std::ostream& out) {
  out << "#compdef faultline\n"
         "# zsh completion for faultline; generated by `faultline completions zsh`.\n"
         "_faultline() {\n"
         "  local command='' i\n"
         "  local -a commands flags\n"
         "  for ((i = 2; i < CURRENT; i++)); do\n"
         "    case \"$command/${words[i]}\" in\n";
  write_command_walk(commands, out);
  out << "    esac\n"
         "  done\n"
         "  case \"$command/${words[CURRENT - 1]}\" in\n";
  write_value_arms(commands, Shell::kZsh, out);
  out << "  esac\n"
         "  case $command in\n";
  for (const Command& command : commands) {
    out << "    " << sh_quote(command.path) << ")\n      commands=(";
    for (const CLI::App* sub : command.subcommands) {
      out << " " << sh_quote(sub->get_name() + ":" + sub->get_description());
    }
    out << " )\n      flags=(";
    for (const Flag& flag : command.flags) {
      for (const std::string& name : flag.names)
        out << " " << sh_quote(name + ":" + flag.description);
    }
    out << " ) ;;\n";
  }
  out << "  esac\n"
         "  if [[ ${words[CURRENT]} == -* ]]; then\n"
         "    _describe -t options option flags\n"
         "  elif (( ${#commands} )); then\n"
         "    _describe -t commands command commands\n"
         "  else\n"
         "    _files\n"
         "  fi\n"
         "}\n"
         "if [[ $funcstack[1] == _faultline ]]; then\n"
         "  _faultline \"$@\"\n"
         "else\n"
         "  compdef _faultline faultline\n"
         "fi\n";
}

// The fish condition under which `command` is the one being completed.
std::string fish_condition(const Command& command) {
  if (command.path.empty()) return "__fish_use_subcommand";
  std::string condition;
  std::string_view rest = command.path;
  while (!rest.empty()) {
    const size_t space = rest.find(' ');
    condition += (condition.empty() ? "" : "; and ") + std::string("__fish_seen_subcommand_from ") +
                 std::string(rest.substr(0, space));
    rest = space == std::string_view::npos ? "" : rest.substr(space + 1);
  }
  if (!command.subcommands.empty()) {
    condition += "; and not __fish_seen_subcommand_from " + subcommand_names(command);
  }
  return condition;
}

void write_fish(const std::vector<Command>& commands, std::ostream& out) {
  out << "# fish completion for faultline; generated by `faultline completions fish`.\n";
  for (const Command& command : commands) {
    const std::string head = "complete -c faultline -n " + fish_quote(fish_condition(command));
    for (const CLI::App* sub : command.subcommands) {
      out << head << " -f -a " << fish_quote(sub->get_name()) << " -d "
          << fish_quote(sub->get_description()) << "\n";
    }
    for (const Flag& flag : command.flags) {
      out << head;
      for (const std::string& name : flag.names) {
        out << (name.starts_with("--") ? " -l " + name.substr(2) : " -s " + name.substr(1));
      }
      if (flag.takes_value) out << " -r";
      if (!flag.choices.empty()) out << " -f -a " << fish_quote(joined(flag.choices));
      out << " -d " << fish_quote(flag.description) << "\n";
    }
  }
}

}  // namespace

CLI::App* add_completions_command(CLI::App* app, std::string* shell) {
  CLI::App* command = app->add_subcommand("completions", "Print a shell completion script");
  command->group("");  // hidden: packages install its output (CMakeLists.txt)
  command->add_option("shell", *shell, "The shell")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  return command;
}

void write_completions(const CLI::App& app, const std::string& shell, std::ostream& out) {
  const std::vector<Command> commands = commands_of(app);
  if (shell == "bash") {
    write_bash(commands, out);
  } else if (shell == "zsh") {
    write_zsh(commands, out);
  } else {
    write_fish(commands, out);
  }
}

}  // namespace faultline
