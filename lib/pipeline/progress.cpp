#include "pipeline/progress.h"

namespace faultline {
namespace {

constexpr uint64_t kReportBytes = uint64_t{64} << 20;
constexpr auto kReportInterval = std::chrono::milliseconds(250);
// Lines between two reports: reading the clock per line would cost more than the progress line
// is worth.
constexpr uint64_t kLinesPerClockCheck = 1024;

// Passes every call through to the reader it wraps, telling the tracker every so many lines
// and at the end.
class ReportingReader : public LineReader {
 public:
  ReportingReader(std::unique_ptr<LineReader> inner, ProgressTracker* tracker)
      : inner_(std::move(inner)), tracker_(tracker) {}

  bool Next(Line* line) override {
    if (!error_.empty()) return false;
    const bool more = inner_->Next(line);
    if (!more || lines_++ % kLinesPerClockCheck == 0) {
      const bool in_time = tracker_->Add(inner_->path(), inner_->bytes() - sent_);
      sent_ = inner_->bytes();
      if (!in_time && more) {
        error_ = inner_->path() + ": reading stopped at the time limit";
        return false;
      }
    }
    return more;
  }
  const std::string& path() const override { return inner_->path(); }
  std::string_view compression() const override { return inner_->compression(); }
  uint64_t bytes() const override { return inner_->bytes(); }
  uint64_t lines() const override { return inner_->lines(); }
  uint64_t cut_lines() const override { return inner_->cut_lines(); }
  const std::string& error() const override { return error_.empty() ? inner_->error() : error_; }
  std::string notice() const override { return inner_->notice(); }

 private:
  std::unique_ptr<LineReader> inner_;
  ProgressTracker* tracker_;
  uint64_t lines_ = 0;
  uint64_t sent_ = 0;  // bytes reported so far
  std::string error_;  // set when the tracker's deadline stopped the reading
};

}  // namespace

bool ProgressTracker::Add(const std::string& path, uint64_t more) {
  std::lock_guard lock(mutex_);
  total_ += more;
  const Clock::time_point now = Clock::now();
  const bool in_time = !deadline_ || now < *deadline_;
  if (total_ - reported_ < kReportBytes && now - last_ < kReportInterval) return in_time;
  reported_ = total_;
  last_ = now;
  if (progress_) progress_(path, total_);
  return in_time;
}

std::unique_ptr<LineReader> ProgressTracker::Wrap(std::unique_ptr<LineReader> reader) {
  return std::make_unique<ReportingReader>(std::move(reader), this);
}

}  // namespace faultline
