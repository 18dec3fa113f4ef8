// The report's inline SVG charts (report_svg.h).
#include "report/report_svg.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <optional>

#include "report/html_text.h"

namespace trtllm_run::report {
namespace {

constexpr int kLabelWidth = 220;
constexpr int kChartWidth = 640;
constexpr int kRowHeight = 22;

std::string Px(double value) { return Number(value, 1); }

std::string ColorOf(const std::string& status) {
  if (status == "PASSED") return "#2e7d32";
  if (status == "SKIPPED") return "#757575";
  if (status == "CANCELLED") return "#8d6e63";
  return "#c62828";
}

std::string UtcText(double at) {
  std::time_t seconds = static_cast<std::time_t>(at);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%d %H:%M", &parts);
  return buffer;
}

}  // namespace

std::string TimelineSvg(const std::vector<TimelineJob>& jobs) {
  double first = INFINITY, last = -INFINITY;
  for (const TimelineJob& job : jobs) {
    for (const std::optional<double>& at : {job.submit, job.start, job.end}) {
      if (at && std::isfinite(*at)) {
        first = std::min(first, *at);
        last = std::max(last, *at);
      }
    }
  }
  if (!std::isfinite(first)) return "";
  const double span = std::max(1.0, last - first);
  const double scale = kChartWidth / span;
  const int height = static_cast<int>(jobs.size()) * kRowHeight + 40;
  const int width = kLabelWidth + kChartWidth + 20;
  std::string svg = "<svg class=\"timeline\" width=\"" + std::to_string(width) + "\" height=\"" +
                    std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " +
                    std::to_string(height) + "\" role=\"img\">";
  svg += "<title>shard timeline: queued (hatched grey) and running per job</title>";
  // The axis: 0 and the span, in seconds from the first record.
  const int axis_y = height - 22;
  svg += "<line x1=\"" + std::to_string(kLabelWidth) + "\" y1=\"" + std::to_string(axis_y) +
         "\" x2=\"" + std::to_string(kLabelWidth + kChartWidth) + "\" y2=\"" +
         std::to_string(axis_y) + "\" stroke=\"#999\"/>";
  for (int tick = 0; tick <= 4; ++tick) {
    const double x = kLabelWidth + kChartWidth * tick / 4.0;
    svg += "<text x=\"" + Px(x) + "\" y=\"" + std::to_string(axis_y + 15) +
           "\" font-size=\"11\" text-anchor=\"middle\">" +
           Number(span * tick / 4.0, span < 20 ? 1 : 0) + " s</text>";
  }
  int row = 0;
  for (const TimelineJob& job : jobs) {
    const int y = 8 + row * kRowHeight;
    ++row;
    const std::string label = job.job_id.empty() ? job.label : job.label + " (" + job.job_id + ")";
    svg += "<text x=\"4\" y=\"" + std::to_string(y + 13) + "\" font-size=\"12\">" +
           HtmlText(CutText(label, 30)) + "</text>";
    auto bar = [&](std::optional<double> from, std::optional<double> to, const std::string& fill,
                   const std::string& what) {
      if (!from || !to || !std::isfinite(*from) || !std::isfinite(*to) || *to < *from) return;
      const double x = kLabelWidth + (*from - first) * scale;
      const double w = std::max(1.0, (*to - *from) * scale);
      svg += "<rect class=\"" + what + "\" x=\"" + Px(x) + "\" y=\"" + std::to_string(y + 2) +
             "\" width=\"" + Px(w) + "\" height=\"" + std::to_string(kRowHeight - 6) +
             "\" fill=\"" + fill + "\"><title>" + HtmlText(label) + ": " + what + " " +
             Number(*to - *from, 0) + " s (" + HtmlText(job.source) + ")</title></rect>";
    };
    bar(job.submit, job.start, "url(#queued)", "queued");
    bar(job.start, job.end, ColorOf(job.status), "running");
  }
  svg +=
      "<defs><pattern id=\"queued\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#ddd\"/><line "
      "x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#999\" stroke-width=\"3\"/></pattern></defs>";
  svg += "</svg>";
  return svg;
}

std::string PerfSvg(const PerfSeries& series) {
  std::vector<std::pair<double, double>> points;
  for (const auto& point : series.history) {
    if (std::isfinite(point.first) && std::isfinite(point.second)) points.push_back(point);
  }
  std::optional<std::pair<double, double>> fresh;
  if (series.value && std::isfinite(*series.value)) {
    double at = series.value_time.value_or(points.empty() ? 0.0 : points.back().first + 86400);
    fresh = std::make_pair(at, *series.value);
  }
  std::optional<double> baseline, threshold_line;
  if (series.baseline && std::isfinite(*series.baseline)) {
    baseline = *series.baseline;
    if (series.threshold && std::isfinite(*series.threshold)) {
      const double factor =
          series.direction == "minimize" ? 1 + *series.threshold : 1 - *series.threshold;
      threshold_line = *baseline * factor;
    }
  }
  if (points.empty() && !fresh) return "";
  std::vector<std::pair<double, double>> all = points;
  if (fresh) all.push_back(*fresh);
  double t0 = all.front().first, t1 = all.front().first;
  double lo = all.front().second, hi = all.front().second;
  for (const auto& [t, v] : all) {
    t0 = std::min(t0, t), t1 = std::max(t1, t);
    lo = std::min(lo, v), hi = std::max(hi, v);
  }
  for (const std::optional<double>& line : {baseline, threshold_line}) {
    if (line) lo = std::min(lo, *line), hi = std::max(hi, *line);
  }
  const double pad = (hi - lo) > 0 ? (hi - lo) * 0.08 : std::max(1.0, std::fabs(hi) * 0.05);
  lo -= pad, hi += pad;
  const double left = 70, right = 20, top = 14, bottom = 34, width = 560, height = 220;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  auto X = [&](double t) {
    return t1 > t0 ? left + (t - t0) / (t1 - t0) * plot_w : left + plot_w / 2;
  };
  auto Y = [&](double v) { return top + (hi - v) / (hi - lo) * plot_h; };
  std::string svg =
      "<svg class=\"perf\" width=\"560\" "
      "height=\"220\" viewBox=\"0 0 560 220\" role=\"img\"><title>" +
      HtmlText(series.metric) + "</title>";
  svg += "<rect x=\"" + Px(left) + "\" y=\"" + Px(top) + "\" width=\"" + Px(plot_w) +
         "\" height=\"" + Px(plot_h) + "\" fill=\"#fafafa\" stroke=\"#ccc\"/>";
  for (int tick = 0; tick <= 2; ++tick) {
    const double v = lo + (hi - lo) * tick / 2;
    svg += "<text x=\"" + Px(left - 4) + "\" y=\"" + Px(Y(v) + 4) +
           "\" font-size=\"10\" text-anchor=\"end\">" + Number(v, std::fabs(v) < 10 ? 3 : 1) +
           "</text>";
  }
  svg += "<text x=\"" + Px(left) + "\" y=\"" + Px(height - 8) + "\" font-size=\"10\">" +
         UtcText(t0) + "</text><text x=\"" + Px(left + plot_w) + "\" y=\"" + Px(height - 8) +
         "\" font-size=\"10\" text-anchor=\"end\">" + UtcText(t1) + "</text>";
  auto hline = [&](double v, const std::string& cls, const std::string& color,
                   const std::string& dash, const std::string& label) {
    svg += "<line class=\"" + cls + "\" x1=\"" + Px(left) + "\" x2=\"" + Px(left + plot_w) +
           "\" y1=\"" + Px(Y(v)) + "\" y2=\"" + Px(Y(v)) + "\" stroke=\"" + color +
           "\" stroke-dasharray=\"" + dash + "\"><title>" + label + " " + Number(v, 3) +
           "</title></line>";
  };
  if (baseline) hline(*baseline, "baseline", "#1565c0", "6 3", "baseline");
  if (threshold_line) hline(*threshold_line, "threshold", "#ef6c00", "2 3", "threshold");
  if (!points.empty()) {
    std::string path;
    for (const auto& [t, v] : points)
      path += (path.empty() ? "M" : " L") + Px(X(t)) + " " + Px(Y(v));
    svg += "<path d=\"" + path + "\" fill=\"none\" stroke=\"#90a4ae\"/>";
    for (const auto& [t, v] : points) {
      svg += "<circle class=\"history\" cx=\"" + Px(X(t)) + "\" cy=\"" + Px(Y(v)) +
             "\" r=\"3\" fill=\"#546e7a\"><title>" + UtcText(t) + ": " + Number(v, 3) +
             "</title></circle>";
    }
  }
  if (fresh) {
    svg += "<circle class=\"new\" cx=\"" + Px(X(fresh->first)) + "\" cy=\"" + Px(Y(fresh->second)) +
           "\" r=\"6\" fill=\"" + std::string(series.regressed ? "#c62828" : "#2e7d32") +
           "\" stroke=\"#000\"><title>this run: " + Number(fresh->second, 3) + "</title></circle>";
  }
  svg += "</svg>";
  return svg;
}

}  // namespace trtllm_run::report
