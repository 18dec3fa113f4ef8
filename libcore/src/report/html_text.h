// Private: text for the HTML report (html_report.h). Every byte of a run's data that
// reaches the page goes through HtmlText: nothing of it is ever markup.
#ifndef TRTLLM_RUN_REPORT_HTML_TEXT_H_
#define TRTLLM_RUN_REPORT_HTML_TEXT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace trtllm_run::report {

// `text` as HTML character data and as a quoted attribute value alike (also inside inline
// SVG): & < > " ' as entities; newline and tab kept (the page shows them in <pre>); every
// other C0 control byte, DEL and the C1 controls U+0080..U+009F as the visible text
// "\xNN"; bytes that are not UTF-8 as U+FFFD. So a test name holding "<script>",
// "</script>", "]]>" or an escape sequence shows as those characters and is never parsed.
std::string HtmlText(std::string_view text);

// The first `max_bytes` of `text`, cut at a UTF-8 sequence boundary, with "..." appended
// when something was cut.
std::string CutText(std::string_view text, std::size_t max_bytes);

// `value` with `decimals` digits after the point ("12.50"); "-" when not finite.
std::string Number(double value, int decimals);

// Seconds as "1 h 02 min", "3 min 05 s", "4.2 s".
std::string DurationText(double seconds);

// Seconds since the epoch of an ISO 8601 UTC time "YYYY-MM-DDTHH:MM:SS[.fff][Z]"; nullopt
// when `text` is not one.
std::optional<double> ParseIsoUtc(std::string_view text);

}  // namespace trtllm_run::report

#endif  // TRTLLM_RUN_REPORT_HTML_TEXT_H_
