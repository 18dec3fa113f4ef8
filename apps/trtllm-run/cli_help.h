// The help, man page and shell completion of trtllm-run, all read from the option
// tables the subcommands parse with (cli.h Parse): a flag added to a table appears in
// --help, in trtllm-run.1 and in the completion scripts without further work.
#ifndef TRTLLM_RUN_APPS_CLI_HELP_H_
#define TRTLLM_RUN_APPS_CLI_HELP_H_

#include <boost/program_options.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace trtllm_run::cli {

// One flag as the documentation shows it.
struct OptionDoc {
  std::string long_name;        // "partition"
  char short_name = 0;          // 'p', or 0
  std::string value_name;       // "ARG", "FILE", ...; "" for a switch
  bool value_optional = false;  // --flag alone means true (implicit value)
  bool repeatable = false;
  std::string default_value;  // "" when none
  std::string help;
};

struct OptionGroupDoc {
  std::string caption;  // may be empty
  std::vector<OptionDoc> options;
};

// A subcommand as its table describes it.
struct CommandDoc {
  std::string name;         // "run"
  std::string description;  // one line, from main.cc's subcommand table
  std::string positional;   // "WORK_DIR" when the subcommand takes one, else ""
  std::string about;        // paragraphs shown after the usage line
  std::vector<OptionGroupDoc> groups;
};

// The flags of `options` (the help flag excluded), grouped by their captions.
std::vector<OptionGroupDoc> DescribeOptions(
    const boost::program_options::options_description& options);

// The width --help wraps to: $COLUMNS when it is a number >= 40, else the terminal's
// width when stdout is a terminal, else 80.
int HelpWidth();

// `text` broken into lines of at most `width` columns at spaces; a word is never split
// (a word longer than a line stands alone). Every line starts with `indent` spaces but
// the first, which starts with `first_indent`. Newlines in `text` are kept.
std::string Wrap(const std::string& text, int width, int first_indent, int indent);

// "usage: ..." and the grouped flags, wrapped to `width`.
void PrintCommandHelp(std::ostream& out, const CommandDoc& command, int width);

// The exit codes and the duration syntax, as --help and the man page state them.
const char* ExitCodesText();
const char* DurationsText();
// The man page's FILES (the user config, a checkout's config, the catalog), ENVIRONMENT
// and EXAMPLES; FilesText also ends `trtllm-run --help`.
const char* FilesText();
const char* EnvironmentText();
const char* ExamplesText();

// The generated documents. `commands` are all subcommands in table order; `run` first.
std::string ManPage(const std::vector<CommandDoc>& commands, const std::string& version);
std::string BashCompletion(const std::vector<CommandDoc>& commands);
std::string ZshCompletion(const std::vector<CommandDoc>& commands);

}  // namespace trtllm_run::cli

#endif  // TRTLLM_RUN_APPS_CLI_HELP_H_
