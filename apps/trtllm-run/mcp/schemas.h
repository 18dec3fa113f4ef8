// The tools the MCP server offers: names, descriptions, JSON Schemas of their arguments
// (inputSchema) and of their structuredContent (outputSchema), and the check of a call's
// arguments against its inputSchema. The request fields of plan_case, run_case and
// run_cases come from libcore's RequestFields(), the table behind the CLI flags and
// request files, so the three can never drift apart.
#ifndef TRTLLM_RUN_APPS_MCP_SCHEMAS_H_
#define TRTLLM_RUN_APPS_MCP_SCHEMAS_H_

#include <string>
#include <string_view>
#include <vector>

#include "json.h"
#include "trtllm_run/status.h"

namespace trtllm_run::mcp {

// The tools/list "tools" array, in a fixed order.
const Value& ToolList();

// The tool's definition in ToolList(), or null for an unknown name.
const Value* FindTool(std::string_view name);

// True for the tools whose arguments include the case request fields.
bool TakesRequestFields(std::string_view tool);

// Checks `arguments` (an object) against the tool's own arguments: known names, JSON
// types, bounds, required ones. Names that are not the tool's own are left to the
// request-field check when the tool takes request fields (their values are checked
// there, as the CLI checks its flags), else they are errors. kInvalidInput naming the
// argument and what is valid.
Status CheckToolArguments(std::string_view tool, const Value& arguments);

// True when `name` is one of the tool's own (non-request-field) arguments.
bool IsToolOption(std::string_view tool, std::string_view name);

// Every argument name of the tool's inputSchema (its own and, for the tools that take
// them, the request fields): what a did-you-mean chooses among. Empty for an unknown tool.
std::vector<std::string> ToolArgumentNames(std::string_view tool);

}  // namespace trtllm_run::mcp

#endif  // TRTLLM_RUN_APPS_MCP_SCHEMAS_H_
