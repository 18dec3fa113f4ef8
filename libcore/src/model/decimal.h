// Private: numbers printed for people with a fixed count of decimals.
#ifndef TRTLLM_RUN_MODEL_DECIMAL_H_
#define TRTLLM_RUN_MODEL_DECIMAL_H_

#include <cstdio>
#include <string>

namespace trtllm_run {

// `value` with exactly `decimals` digits after the point, as printf's "%.*f" prints it
// (whole, however large the value; "nan" and "inf" as printf writes them).
inline std::string FixedDecimals(double value, int decimals) {
  const int length = std::snprintf(nullptr, 0, "%.*f", decimals, value);
  if (length <= 0) return std::string();
  std::string text(static_cast<std::size_t>(length) + 1, '\0');
  std::snprintf(text.data(), text.size(), "%.*f", decimals, value);
  text.pop_back();
  return text;
}

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_MODEL_DECIMAL_H_
