// The plan as `trtllm-run plan` prints it (spec 001 Step 6), shared by the CLI and the
// MCP server's plan_case tool so that both show the same text.
#include <sstream>

#include "trtllm_run/runtime.h"

namespace trtllm_run {

std::vector<std::string> PlanNotes(const PreparedCase& prepared) {
  std::vector<std::string> notes = prepared.planned.notes;
  auto extra = prepared.spec.extra.find("resolution_notes");
  if (extra != prepared.spec.extra.end()) {
    std::istringstream lines(extra->second);
    for (std::string line; std::getline(lines, line);) notes.push_back(line);
  }
  return notes;
}

std::string FormatPlanSummary(const PreparedCase& prepared) {
  const JobSpec& spec = prepared.spec;
  std::ostringstream out;
  out << "Generated: " << spec.work_dir << "/job_spec.json\n";
  out << "Script: "
      << (spec.script_path.empty() ? "(none: " + spec.scenario + " runs the command directly)"
                                   : spec.script_path)
      << "\n";
  out << "Workflow: " << spec.workflow_type << "\n";
  out << "Model: " << spec.model_name << "\n";
  out << "Docker image: " << (spec.container_image.empty() ? "(none)" : spec.container_image)
      << "\n";
  // As the executor placed them (job_spec.json), not as the workflow first sized them.
  out << "Devices: " << spec.required_devices << " GPUs across " << spec.node_count << " node"
      << (spec.node_count == 1 ? "" : "s") << " (" << spec.required_devices_per_node
      << " per node, " << spec.total_required_devices << " in total)\n";
  out << "Scenario: " << spec.scenario << "\n";
  if (spec.silence_timeout_seconds > 0) {
    out << "Silence timeout: " << spec.silence_timeout_seconds
        << "s (no new output for that long stops the job: HANG_DETECTED)\n";
  }
  out << "Work dir: " << spec.work_dir << "\n";
  std::vector<std::string> notes = PlanNotes(prepared);
  if (!notes.empty()) {
    out << "Notes:\n";
    for (const std::string& note : notes) out << "  - " << note << "\n";
  }
  return out.str();
}

}  // namespace trtllm_run
