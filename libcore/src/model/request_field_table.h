// The CaseRequest field table (one row per field) shared by the request parser and its
// value checks.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trtllm_run/request.h"

namespace trtllm_run {

using StringMember = std::optional<std::string> CaseRequest::*;
using IntMember = std::optional<int> CaseRequest::*;
using BoolMember = std::optional<bool> CaseRequest::*;
using ListMember = std::vector<std::string> CaseRequest::*;

// One row of the field table: exactly one of the member pointers is set, matching type.
struct FieldDef {
  const char* name;
  FieldType type;
  const char* help;
  StringMember str = nullptr;
  IntMember integer = nullptr;
  BoolMember boolean = nullptr;
  ListMember list = nullptr;
  bool allows_zero = false;  // kInt: 0 is a meaningful value (required_devices: CPU only)
  bool slurm_time = false;   // kString: a Slurm time limit, stored as sbatch --time reads it
};

// In the order of the CaseRequest declaration. slurm_password is deliberately absent.
const std::vector<FieldDef>& FieldTable();

// "max-nodes" -> "max_nodes" and back.
std::string ToSnake(std::string_view name);
std::string ToKebab(std::string_view name);

}  // namespace trtllm_run
