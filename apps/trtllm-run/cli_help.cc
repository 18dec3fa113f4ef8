#include "cli_help.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

namespace trtllm_run::cli {

namespace po = boost::program_options;

namespace {

// The value name and default of a typed value, from boost's own text for it:
// "arg", "FILE (=30)", "[=arg(=true)]", "[=arg(=true)] (=false)".
void ReadSemanticName(const std::string& text, OptionDoc* doc) {
  std::string name = text;
  std::size_t default_at = text.find(" (=");
  if (default_at != std::string::npos && text.back() == ')') {
    doc->default_value = text.substr(default_at + 3, text.size() - default_at - 4);
    name = text.substr(0, default_at);
  }
  if (name.rfind("[=", 0) == 0) {
    doc->value_optional = true;
    name = name.substr(
        2, name.find("(=") == std::string::npos ? std::string::npos : name.find("(=") - 2);
  }
  doc->value_name = name == "arg" ? "ARG" : name;
}

OptionDoc DescribeOption(const po::option_description& option) {
  OptionDoc doc;
  doc.long_name = option.long_name();
  std::string shown = option.canonical_display_name(po::command_line_style::allow_dash_for_short);
  if (shown.size() == 2 && shown[0] == '-') doc.short_name = shown[1];
  doc.help = option.description();
  const po::value_semantic& semantic = *option.semantic();
  if (semantic.max_tokens() > 0) {
    ReadSemanticName(semantic.name(), &doc);
    doc.repeatable = semantic.is_composing();
  }
  return doc;
}

// The long name an option line of boost's listing shows: "  --json", "  -p [ --partition ] arg".
std::string ListedLongName(const std::string& line) {
  std::size_t at = line.find("--");
  if (at == std::string::npos) return "";
  std::size_t end = line.find_first_of(" ]=", at);
  return line.substr(at + 2, end == std::string::npos ? std::string::npos : end - at - 2);
}

std::string Upper(std::string text) {
  for (char& c : text) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return text;
}

// "--partition ARG (-p)": the long name first, so that every flag line of --help starts
// with "  --" and scripts reading the help find each flag the same way.
std::string FlagText(const OptionDoc& option) {
  std::string text = "--" + option.long_name;
  if (!option.value_name.empty()) {
    text += option.value_optional ? " [=" + option.value_name + "]" : " " + option.value_name;
  }
  if (option.short_name) text += std::string(" (-") + option.short_name + ")";
  return text;
}

// The help text with the default and repetition spelled out when it does not say them.
std::string FullHelp(const OptionDoc& option) {
  std::string help = option.help;
  if (!option.default_value.empty() && help.find("default") == std::string::npos) {
    help += " (default: " + option.default_value + ")";
  }
  if (option.repeatable && help.find("repeatable") == std::string::npos) help += " (repeatable)";
  return help;
}

// Whether the value completes as a file ("FILE") or a directory ("DIR").
bool TakesPath(const OptionDoc& option, const char* kind) {
  if (std::string(kind) == "FILE") {
    return option.value_name == "FILE" || option.value_name == "PATH";
  }
  return option.value_name == kind;
}

}  // namespace

const char* ExitCodesText() {
  return "0 PASSED, 1 FAILED, 2 bad input (nothing started; with --json an error object on "
         "stdout), 3 ERROR, 4 TIMEOUT, 5 HANG_DETECTED, 6 CANCELLED, 7 OUT_OF_MEMORY, 8 "
         "SKIPPED, 130 interrupted. `trtllm-run env`: 0 probed without errors, 2 bad input or the "
         "probe "
         "listed errors, 3 the probe could not run (no Slurm client tools on the target, SSH "
         "failed).";
}

const char* FilesText() {
  return "$XDG_CONFIG_HOME/trtllm-run/config.yaml (default ~/.config/trtllm-run/config.yaml): "
         "the user config, defaults for every run (request-file keys; `clusters:` sections "
         "per cluster; `history:`); <repo>/.trtllm-run.yaml: a checkout's config (harmless "
         "keys only); $XDG_CONFIG_HOME/trtllm-run/clusters.yaml: the cluster catalog "
         "(--clusters, $TRTLLM_RUN_CLUSTERS). Precedence: flags > --request file > the "
         "checkout's config > the user config > the catalog.";
}

const char* EnvironmentText() {
  return "TRTLLM_RUN_CLUSTERS: the cluster catalog file. TRTLLM_RUN_PLUGIN_PATH: more plugin "
         "directories (colon-separated). TRTLLM_RUN_SLURM_PASSWORD: the SSH password of the "
         "login node (never stored). TRTLLM_RUN_SLURM_ARRAYS=0: `run --cases` submits each "
         "local_slurm case on its own instead of as job arrays. XDG_CONFIG_HOME, "
         "XDG_DATA_HOME: where the config, "
         "catalog and history live. CUDA_VISIBLE_DEVICES: the GPUs a local run may use.";
}

const char* ExamplesText() {
  return "trtllm-run --custom-cmd 'nvidia-smi' (a command here, its verdict as the exit "
         "code); trtllm-run --test-cmd 'pytest tests/unittest/llmapi/test_llm.py' -p batch -t "
         "30m (on Slurm); trtllm-run run --cases examples/cases/hello.yaml (many cases, one "
         "table); trtllm-run list; trtllm-run logs -n 50 @last; trtllm-run status @last.";
}

const char* DurationsText() {
  return "Every time flag takes one duration syntax: 2h, 90m, 3600s, HH:MM:SS, or a bare "
         "number of seconds. The Slurm limits (--time-limit, --alloc-time-limit) take the same "
         "forms and are handed to sbatch as HH:MM:SS (D-HH:MM:SS from a day on); Slurm's own "
         "forms are accepted there too (D-HH:MM:SS, MM:SS, UNLIMITED), and a bare number "
         "there is Slurm's minutes.";
}

std::vector<OptionGroupDoc> DescribeOptions(const po::options_description& options) {
  std::map<std::string, OptionDoc> by_name;
  for (const auto& option : options.options())
    by_name[option->long_name()] = DescribeOption(*option);
  // boost keeps the group captions private: they are read back from its own listing,
  // where a caption is an unindented line ending in ':' and an option line starts with
  // exactly two spaces and a dash (continuation lines are indented further).
  std::ostringstream listing;
  options.print(listing);
  std::vector<OptionGroupDoc> groups(1);
  std::istringstream lines(listing.str());
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line[0] != ' ' && line.back() == ':') {
      if (!groups.back().options.empty() || !groups.back().caption.empty()) groups.emplace_back();
      groups.back().caption = line.substr(0, line.size() - 1);
    } else if (line.rfind("  -", 0) == 0) {
      auto found = by_name.find(ListedLongName(line));
      if (found == by_name.end()) continue;
      groups.back().options.push_back(found->second);
      by_name.erase(found);
    }
  }
  groups.erase(std::remove_if(groups.begin(), groups.end(),
                              [](const OptionGroupDoc& g) { return g.options.empty(); }),
               groups.end());
  return groups;
}

int HelpWidth() {
  if (const char* columns = std::getenv("COLUMNS"); columns && *columns) {
    char* end = nullptr;
    long value = std::strtol(columns, &end, 10);
    if (*end == '\0' && value >= 40 && value <= 1000) return static_cast<int>(value);
  }
  struct winsize size {};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 &&
      size.ws_col >= 40) {
    return size.ws_col;
  }
  return 80;
}

std::string Wrap(const std::string& text, int width, int first_indent, int indent) {
  std::string out;
  std::istringstream paragraphs(text);
  std::string paragraph;
  bool first_line = true;
  while (std::getline(paragraphs, paragraph)) {
    std::istringstream words(paragraph);
    std::string word;
    int column = 0;
    bool line_empty = true;
    auto new_line = [&] {
      if (!first_line) out += "\n";
      int pad = first_line ? first_indent : indent;
      out += std::string(static_cast<std::size_t>(pad), ' ');
      column = pad;
      first_line = false;
      line_empty = true;
    };
    new_line();
    while (words >> word) {
      int length = static_cast<int>(word.size());
      if (!line_empty && column + 1 + length > width) new_line();
      if (!line_empty) {
        out += ' ';
        ++column;
      }
      out += word;
      column += length;
      line_empty = false;
    }
  }
  return out;
}

void PrintCommandHelp(std::ostream& out, const CommandDoc& command, int width) {
  out << "usage: trtllm-run " << command.name << " [options]"
      << (command.positional.empty() ? "" : " " + command.positional) << "\n";
  if (!command.description.empty()) out << "\n" << Wrap(command.description, width, 0, 0) << "\n";
  if (!command.about.empty()) out << "\n" << Wrap(command.about, width, 0, 0) << "\n";
  const int column = width >= 72 ? 30 : width / 3;
  for (const OptionGroupDoc& group : command.groups) {
    out << "\n";
    if (!group.caption.empty()) out << Wrap(group.caption + ":", width, 0, 2) << "\n";
    for (const OptionDoc& option : group.options) {
      std::string flag = "  " + FlagText(option);
      std::string help = FullHelp(option);
      if (static_cast<int>(flag.size()) + 2 <= column) {
        std::string wrapped = Wrap(help, width, column, column);
        out << flag << wrapped.substr(flag.size()) << "\n";
      } else {
        out << flag << "\n" << Wrap(help, width, column, column) << "\n";
      }
    }
  }
  const std::string help_flag = "  --help (-h)";
  out << help_flag
      << std::string(static_cast<std::size_t>(std::max<int>(2, column - help_flag.size())), ' ')
      << "show this help\n";
}

// ---- man page ----

namespace {

// A word or phrase as roff shows it literally: backslashes and dashes escaped.
std::string RoffWord(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c == '"') {
      out += "\\(dq";
    } else {
      out += c;
    }
  }
  return out;
}

// Text lines as roff shows them literally, each ended by a newline: no line starts with
// a control character.
std::string Roff(const std::string& text) {
  std::string out = RoffWord(text);
  std::string safe;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && (line[0] == '.' || line[0] == '\'')) safe += "\\&";
    safe += line + "\n";
  }
  return safe;
}

}  // namespace

std::string ManPage(const std::vector<CommandDoc>& commands, const std::string& version) {
  std::ostringstream man;
  man << ".\\\" Generated by `trtllm-run --help-man` from trtllm-run's option tables.\n"
      << ".TH TRTLLM\\-RUN 1 \"\" \"trtllm-run " << version << "\" \"User Commands\"\n"
      << ".SH NAME\n"
      << "trtllm\\-run \\- run one TensorRT\\-LLM test case and report its verdict\n"
      << ".SH SYNOPSIS\n"
      << ".B trtllm\\-run\n[\\fISUBCOMMAND\\fR] [\\fIoptions\\fR]\n"
      << ".SH DESCRIPTION\n"
      << Roff(
             "Runs one TensorRT-LLM case (pytest, trtllm-bench, trtllm-eval or any command) on "
             "this host, in Docker or on Slurm (here or over SSH), and reports a verdict as its "
             "exit code. Without a subcommand, trtllm-run runs `run`.")
      << ".SH SUBCOMMANDS\n";
  for (const CommandDoc& command : commands) {
    man << ".TP\n.B " << RoffWord(command.name) << "\n" << Roff(command.description);
  }
  man << ".SH OPTIONS\n";
  for (const CommandDoc& command : commands) {
    man << ".SS \"" << command.name << "\"\n"
        << ".B trtllm\\-run " << RoffWord(command.name) << " [\\fIoptions\\fR]"
        << (command.positional.empty() ? "" : " \\fI" + command.positional + "\\fR") << "\n";
    if (!command.about.empty()) man << ".PP\n" << Roff(command.about);
    for (const OptionGroupDoc& group : command.groups) {
      if (!group.caption.empty()) man << ".PP\n.I \"" << RoffWord(group.caption) << "\"\n";
      for (const OptionDoc& option : group.options) {
        man << ".TP\n";
        if (option.short_name) man << "\\fB\\-" << option.short_name << "\\fR, ";
        man << "\\fB\\-\\-" << RoffWord(option.long_name) << "\\fR";
        if (!option.value_name.empty()) {
          man << (option.value_optional ? "[=\\fI" : " \\fI") << option.value_name
              << (option.value_optional ? "\\fR]" : "\\fR");
        }
        man << "\n" << Roff(FullHelp(option));
      }
    }
  }
  man << ".SH DURATIONS\n"
      << Roff(DurationsText()) << ".SH \"EXIT STATUS\"\n"
      << Roff(ExitCodesText()) << ".SH FILES\n"
      << Roff(std::string(FilesText()) +
              " The installed share/trtllm-run/examples/ holds a documented clusters.yaml and "
              "sample cases files. $XDG_DATA_HOME/trtllm-run/history.sqlite (default "
              "~/.local/share/trtllm-run/history.sqlite): the history every run, case and "
              "stage test is recorded in (--history, --no-history, `history:` in the user "
              "config); read with `trtllm-run history`. "
              "--html FILE (run, exec, stage) and `trtllm-run report RUN_DIR --html FILE`: one "
              "self-contained HTML report of a run (docs/report.md); the MCP server writes "
              "<handle>/report.html.")
      << ".SH ENVIRONMENT\n"
      << Roff(EnvironmentText()) << ".SH EXAMPLES\n"
      << Roff(ExamplesText()) << ".SH \"SEE ALSO\"\n"
      << Roff("trtllm-run SUBCOMMAND --help; the README and docs/ of the trtllm-run sources.");
  return man.str();
}

// ---- completion ----

namespace {

// The values a flag's value name stands for, offered by the completions ("" for none).
std::string ValueChoices(const std::string& value_name) {
  if (value_name == "SCENARIO") return "local_direct local_docker local_slurm remote_slurm";
  if (value_name == "RUNTIME") return "pyxis none";
  return "";
}

std::string Words(const CommandDoc& command, bool (*keep)(const OptionDoc&), bool with_short) {
  std::string words;
  for (const OptionGroupDoc& group : command.groups) {
    for (const OptionDoc& option : group.options) {
      if (!keep(option)) continue;
      if (!words.empty()) words += ' ';
      words += "--" + option.long_name;
      if (with_short && option.short_name) words += std::string(" -") + option.short_name;
    }
  }
  return words;
}

// A one-line description zsh's _arguments and _describe accept inside single quotes.
std::string ZshText(const std::string& text) {
  std::string first = text.substr(0, text.find(". "));
  if (first.size() > 70) first = first.substr(0, first.rfind(' ', 67)) + "...";
  std::string out;
  for (char c : first) {
    if (c == '[' || c == '(') {
      out += '(';
    } else if (c == ']' || c == ')') {
      out += ')';
    } else if (c == ':') {
      out += "\\:";
    } else if (c == '\'' || c == '\\' || c == '\n' || c == '`') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string ZshFunctionName(const std::string& command) {
  std::string name = "_trtllm_run_" + command;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

}  // namespace

std::string BashCompletion(const std::vector<CommandDoc>& commands) {
  std::ostringstream out;
  std::string names;
  for (const CommandDoc& command : commands) names += (names.empty() ? "" : " ") + command.name;
  out << "# bash completion for trtllm-run. Generated by `trtllm-run --completion bash` from\n"
      << "# trtllm-run's option tables.\n"
      << "_trtllm_run() {\n"
      << "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
      << "  local subcommands='" << names << "'\n"
      << "  if [[ $COMP_CWORD -eq 1 && $cur != -* ]]; then\n"
      << "    COMPREPLY=($(compgen -W \"$subcommands\" -- \"$cur\"))\n"
      << "    return 0\n"
      << "  fi\n"
      << "  local command=run\n"
      << "  [[ ${COMP_WORDS[1]} != -* ]] && command=${COMP_WORDS[1]}\n"
      << "  local options='' files='' dirs='' values='' positional=''\n"
      << "  case $command in\n";
  for (const CommandDoc& command : commands) {
    out << "    " << command.name << ")\n"
        << "      options='"
        << Words(
               command, [](const OptionDoc&) { return true; }, true)
        << " --help'\n"
        << "      files='"
        << Words(
               command, [](const OptionDoc& o) { return TakesPath(o, "FILE"); }, true)
        << "'\n"
        << "      dirs='"
        << Words(
               command, [](const OptionDoc& o) { return TakesPath(o, "DIR"); }, true)
        << "'\n"
        << "      values='"
        << Words(
               command,
               [](const OptionDoc& o) { return !o.value_name.empty() && !o.value_optional; }, true)
        << "'\n"
        << "      positional='" << command.positional << "'\n"
        << "      ;;\n";
  }
  out << "  esac\n";
  for (const char* value_name : {"SCENARIO", "RUNTIME"}) {
    std::set<std::string> flag_names;
    for (const CommandDoc& command : commands) {
      for (const OptionGroupDoc& group : command.groups) {
        for (const OptionDoc& option : group.options) {
          if (option.value_name == value_name) flag_names.insert("--" + option.long_name);
        }
      }
    }
    if (flag_names.empty()) continue;
    std::string flags;
    for (const std::string& flag : flag_names) flags += (flags.empty() ? "" : "|") + flag;
    out << "  case $prev in " << flags << ") COMPREPLY=($(compgen -W \"" << ValueChoices(value_name)
        << "\" -- \"$cur\")); return 0;; esac\n";
  }
  out << "  case \" $files \" in *\" $prev \"*) COMPREPLY=($(compgen -f -- \"$cur\")); return 0;; "
         "esac\n"
      << "  case \" $dirs \" in *\" $prev \"*) COMPREPLY=($(compgen -d -- \"$cur\")); return 0;; "
         "esac\n"
      << "  case \" $values \" in *\" $prev \"*) return 0;; esac\n"
      << "  if [[ $cur == -* ]]; then\n"
      << "    COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))\n"
      << "  elif [[ -n $positional ]]; then\n"
      << "    COMPREPLY=($(compgen -d -- \"$cur\"))\n"
      << "  fi\n"
      << "  return 0\n"
      << "}\n"
      << "complete -F _trtllm_run trtllm-run\n";
  return out.str();
}

std::string ZshCompletion(const std::vector<CommandDoc>& commands) {
  std::ostringstream out;
  out << "#compdef trtllm-run\n"
      << "# zsh completion for trtllm-run. Generated by `trtllm-run --completion zsh` from\n"
      << "# trtllm-run's option tables.\n\n";
  for (const CommandDoc& command : commands) {
    out << ZshFunctionName(command.name) << "() {\n  _arguments -s -S";
    for (const OptionGroupDoc& group : command.groups) {
      for (const OptionDoc& option : group.options) {
        std::string action;
        if (!option.value_name.empty() && !option.value_optional) {
          action = ":" + Upper(option.value_name) + ":";
          if (TakesPath(option, "FILE")) action += "_files";
          if (option.value_name == "DIR") action += "_files -/";
          if (!ValueChoices(option.value_name).empty()) {
            action += "(" + ValueChoices(option.value_name) + ")";
          }
        }
        std::string spec = "[" + ZshText(option.help) + "]" + action;
        std::string repeat = option.repeatable ? "*" : "";
        out << " \\\n    '" << repeat << "--" << option.long_name << spec << "'";
        if (option.short_name)
          out << " \\\n    '" << repeat << "-" << option.short_name << spec << "'";
      }
    }
    out << " \\\n    '(- *)'{-h,--help}'[show the help]'";
    if (!command.positional.empty()) out << " \\\n    '1:" << command.positional << ":_files -/'";
    out << "\n}\n\n";
  }
  out << "_trtllm-run() {\n"
      << "  local -a subcommands\n"
      << "  subcommands=(\n";
  for (const CommandDoc& command : commands) {
    out << "    '" << command.name << ":" << ZshText(command.description) << "'\n";
  }
  out << "  )\n"
      << "  if (( CURRENT == 2 )) && [[ $words[2] != -* ]]; then\n"
      << "    _describe -t subcommands 'trtllm-run subcommand' subcommands\n"
      << "    return\n"
      << "  fi\n"
      << "  local command=run\n"
      << "  if [[ $words[2] != -* ]]; then\n"
      << "    command=$words[2]\n"
      << "    shift words\n"
      << "    (( CURRENT-- ))\n"
      << "  fi\n"
      << "  case $command in\n";
  for (const CommandDoc& command : commands) {
    out << "    " << command.name << ") " << ZshFunctionName(command.name) << " ;;\n";
  }
  out << "  esac\n"
      << "}\n\n"
      << "_trtllm-run \"$@\"\n";
  return out.str();
}

}  // namespace trtllm_run::cli
